package webpush

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.Pusher = (*Pusher)(nil)

const (
	// sendTimeout is how long one push may take, answer included.
	sendTimeout = 10 * time.Second
	// maxAnswer is how much of an answer's body is read (and dropped),
	// so the connection can serve the next push.
	maxAnswer = 4096
	// maxTopic is RFC 8030's bound on a Topic.
	maxTopic = 32
)

// Options configure a Pusher.
type Options struct {
	// KeyFile is where the VAPID key is kept (made on the first
	// configured start). Required when Contact is set.
	KeyFile string
	// Contact is the operator's contact (CheckContact); "" leaves push
	// unconfigured.
	Contact string
	// Client sends the pushes; nil uses http.DefaultTransport. It is
	// copied: its CheckRedirect is replaced by one that follows nothing.
	Client *http.Client
	// Clock dates the VAPID tokens and reads Retry-After dates; default
	// hub.SystemClock.
	Clock hub.Clock
	// Logger receives diagnostics: the key's creation, each answer's
	// status and outcome with the push service's origin; never an
	// endpoint, a key or a payload. Default discards.
	Logger *slog.Logger
}

// Pusher is the Web Push hub.Pusher. Safe for concurrent use.
type Pusher struct {
	public []byte // nil when unconfigured
	vapid  *vapid
	client *http.Client
	clock  hub.Clock
	log    *slog.Logger

	// timeout and newSender are sendTimeout and newSender but for tests.
	timeout   time.Duration
	newSender func() (sender, error)
}

// errRedirect is CheckRedirect's refusal.
var errRedirect = errors.New("redirect refused")

// New returns the Pusher opts describe. With a contact, the contact must
// pass CheckContact and the key file be usable (made when missing);
// without one, the key file is left alone.
func New(opts Options) (*Pusher, error) {
	p := &Pusher{clock: opts.Clock, log: opts.Logger, timeout: sendTimeout, newSender: newSender}
	if p.clock == nil {
		p.clock = hub.SystemClock{}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	client := http.Client{}
	if opts.Client != nil {
		client = *opts.Client
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	p.client = &client
	if opts.Contact == "" {
		return p, nil
	}
	if err := CheckContact(opts.Contact); err != nil {
		return nil, err
	}
	if opts.KeyFile == "" {
		return nil, errors.New("webpush: a contact is set but no key file")
	}
	key, created, err := loadOrCreateKey(opts.KeyFile)
	if err != nil {
		return nil, err
	}
	if created {
		p.log.Info("made the VAPID key for Web Push", "file", opts.KeyFile)
	}
	if p.public, err = key.PublicKey.Bytes(); err != nil {
		return nil, err
	}
	p.vapid = newVapid(key, p.public, opts.Contact)
	return p, nil
}

// Configured reports whether a contact is set.
func (p *Pusher) Configured() bool { return p.vapid != nil }

// PublicKey returns the VAPID public key, a 65-byte uncompressed P-256
// point, or nil when unconfigured.
func (p *Pusher) PublicKey() []byte {
	if p.public == nil {
		return nil
	}
	return bytes.Clone(p.public)
}

// Push sends msg to sub and reports the push service's answer (see
// hub.Pusher). A subscription or message it cannot send is Invalid and
// sends nothing; an unconfigured Pusher is Unavailable.
func (p *Pusher) Push(ctx context.Context, sub hub.PushSubscription, msg hub.PushMessage) (hub.PushResult, error) {
	if p.vapid == nil {
		return hub.PushResult{}, &hub.Error{Kind: hub.Unavailable, Message: hub.MsgPushNotConfigured}
	}
	target, ua, err := checkSubscription(sub)
	if err != nil {
		return hub.PushResult{}, err
	}
	if err := checkMessage(msg); err != nil {
		return hub.PushResult{}, err
	}
	s, err := p.newSender()
	if err != nil {
		return hub.PushResult{}, hub.Wrap(hub.Internal, err, "the push could not be encrypted")
	}
	body, err := encrypt(s, ua, sub.Auth, msg.Payload)
	if err != nil {
		// The ECDH of a valid point with a fresh key does not fail.
		return hub.PushResult{}, hub.Errorf(hub.Internal, "the push could not be encrypted")
	}
	aud := origin(target)
	auth, err := p.vapid.authorization(aud, p.clock.Now())
	if err != nil {
		return hub.PushResult{}, hub.Wrap(hub.Internal, err, "the push could not be signed")
	}

	sendCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(sendCtx, http.MethodPost, sub.Endpoint, bytes.NewReader(body))
	if err != nil {
		return hub.PushResult{}, hub.Errorf(hub.Invalid, "the push subscription's endpoint is not a usable https URL")
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("TTL", strconv.FormatInt(int64(msg.TTL/time.Second), 10))
	if msg.Urgency != "" {
		req.Header.Set("Urgency", msg.Urgency)
	}
	if msg.Topic != "" {
		req.Header.Set("Topic", msg.Topic)
	}
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("Content-Type", "application/octet-stream")

	resp, err := p.client.Do(req)
	if err != nil {
		return hub.PushResult{}, p.sendError(ctx, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	resp.Body.Close()
	res, err := classify(resp.StatusCode, resp.Header.Get("Retry-After"), p.clock.Now())
	if err != nil {
		p.log.Debug("push service answered without an outcome", "service", aud, "status", resp.StatusCode)
		return hub.PushResult{}, err
	}
	p.log.Debug("push service answered", "service", aud, "status", res.Status, "outcome", outcomeName(res.Outcome), "retryAfter", res.RetryAfter)
	return res, nil
}

// sendError is the error of a send that got no answer, in words that
// quote neither the endpoint nor its host: the transport's errors name
// both.
func (p *Pusher) sendError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, errRedirect):
		return hub.Errorf(hub.Unavailable, "the push service answered with a redirect, which is not followed")
	case ctx.Err() != nil:
		return hub.Wrap(hub.Unavailable, ctx.Err(), "the push was abandoned")
	case errors.Is(err, context.DeadlineExceeded):
		return hub.Wrap(hub.Unavailable, context.DeadlineExceeded,
			"the push service did not answer within "+p.timeout.String())
	}
	var (
		dns   *net.DNSError
		errno syscall.Errno
		cert  *tls.CertificateVerificationError
		auth  x509.UnknownAuthorityError
		host  x509.HostnameError
	)
	switch {
	case errors.As(err, &dns):
		return hub.Errorf(hub.Unavailable, "the push service's host name could not be resolved")
	case errors.As(err, &cert), errors.As(err, &auth), errors.As(err, &host):
		return hub.Errorf(hub.Unavailable, "the push service's TLS certificate is not trusted")
	case errors.As(err, &errno):
		return hub.Wrap(hub.Unavailable, errno, "the push service could not be reached")
	}
	return hub.Errorf(hub.Unavailable, "the push service could not be reached")
}

// checkSubscription reads sub: an https endpoint with a host and no user
// or fragment, a P-256 public key and a 16-byte auth secret.
func checkSubscription(sub hub.PushSubscription) (*url.URL, *ecdh.PublicKey, error) {
	u, err := url.Parse(sub.Endpoint)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
		// url's errors quote the endpoint: none is kept.
		return nil, nil, hub.Errorf(hub.Invalid, "the push subscription's endpoint is not a usable https URL")
	}
	ua, err := ecdh.P256().NewPublicKey(sub.P256DH)
	if err != nil {
		return nil, nil, hub.Errorf(hub.Invalid, "the push subscription's p256dh is not a P-256 public key")
	}
	if len(sub.Auth) != authSize {
		return nil, nil, hub.Errorf(hub.Invalid, "the push subscription's auth secret is not %d bytes", authSize)
	}
	return u, ua, nil
}

// checkMessage checks what msg asks against RFC 8030 and the one-record
// bound.
func checkMessage(msg hub.PushMessage) error {
	if len(msg.Payload) > MaxPayload {
		return hub.Errorf(hub.Invalid, "the push payload is %d bytes; at most %d fit one message", len(msg.Payload), MaxPayload)
	}
	if msg.TTL < 0 {
		return hub.Errorf(hub.Invalid, "the push TTL must not be negative")
	}
	switch msg.Urgency {
	case "", "very-low", "low", "normal", "high":
	default:
		return hub.Errorf(hub.Invalid, "the push urgency must be very-low, low, normal or high")
	}
	if len(msg.Topic) > maxTopic {
		return hub.Errorf(hub.Invalid, "the push topic is longer than %d characters", maxTopic)
	}
	for _, r := range msg.Topic {
		if !isAlnum(r) && r != '-' && r != '_' {
			return hub.Errorf(hub.Invalid, "the push topic must be base64url characters")
		}
	}
	return nil
}

// outcomeName names o for the log.
func outcomeName(o hub.PushOutcome) string {
	switch o {
	case hub.PushAccepted:
		return "accepted"
	case hub.PushGone:
		return "gone"
	case hub.PushRetry:
		return "retry"
	}
	return "rejected"
}
