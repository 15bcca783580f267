package fakes

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.Pusher = (*Pusher)(nil)

// maxPushPayload is the largest payload the real Pusher sends.
const maxPushPayload = 3993

// pusherKey is the fake's VAPID public key: a fixed valid P-256 point.
var pusherKey = func() []byte {
	k, err := ecdh.P256().NewPrivateKey(bytes.Repeat([]byte{0x5a}, 32))
	if err != nil {
		panic(err)
	}
	return k.PublicKey().Bytes()
}()

// Pusher is a hub.Pusher that sends nothing: it checks each push as the
// real one does (the same Invalid refusals, the same Unavailable one
// while unconfigured), records it with its payload in the clear, and
// answers as scripted per endpoint, classifying a scripted status as the
// real one classifies a push service's: 2xx accepted, 404/410 gone,
// 429/5xx retry (Retry-After capped at 300 s), other 4xx rejected.
// Unscripted endpoints answer 201. Its public key is fixed. Safe for
// concurrent use.
type Pusher struct {
	mu           sync.Mutex
	unconfigured bool
	scripts      map[string]pushScript
	pushes       []FakePush
	grew         chan struct{} // closed and replaced at every push recorded
}

// pushScript is how the pushes to one endpoint end.
type pushScript struct {
	status     int
	retryAfter time.Duration
	err        error
	hang       bool
}

// FakePush is one push that reached the fake.
type FakePush struct {
	Subscription hub.PushSubscription
	// Message is as sent, its payload in the clear.
	Message hub.PushMessage
	Result  hub.PushResult
	// Err is the scripted error (or the context's, for a hung push).
	Err error
}

// NewPusher returns a configured fake whose every push is accepted.
func NewPusher() *Pusher { return &Pusher{scripts: map[string]pushScript{}} }

// SetConfigured turns the fake's contact on or off.
func (p *Pusher) SetConfigured(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unconfigured = !on
}

// Answer makes the pushes to endpoint answered with status and
// Retry-After retryAfter (0: none), from now on.
func (p *Pusher) Answer(endpoint string, status int, retryAfter time.Duration) {
	p.script(endpoint, pushScript{status: status, retryAfter: retryAfter})
}

// Fail makes the pushes to endpoint fail with err: the push service's
// answer unknown.
func (p *Pusher) Fail(endpoint string, err error) { p.script(endpoint, pushScript{err: err}) }

// Hang makes the pushes to endpoint wait until their context ends.
func (p *Pusher) Hang(endpoint string) { p.script(endpoint, pushScript{hang: true}) }

func (p *Pusher) script(endpoint string, s pushScript) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scripts[endpoint] = s
}

// Pushes returns the pushes that reached the fake, oldest first.
func (p *Pusher) Pushes() []FakePush {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pushes)
}

// Configured reports whether the fake has a contact.
func (p *Pusher) Configured() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.unconfigured
}

// PublicKey returns the fake's fixed key, or nil when unconfigured.
func (p *Pusher) PublicKey() []byte {
	if !p.Configured() {
		return nil
	}
	return bytes.Clone(pusherKey)
}

// Push checks, records and answers one push as scripted.
func (p *Pusher) Push(ctx context.Context, sub hub.PushSubscription, msg hub.PushMessage) (hub.PushResult, error) {
	if !p.Configured() {
		return hub.PushResult{}, &hub.Error{Kind: hub.Unavailable, Message: hub.MsgPushNotConfigured}
	}
	if err := checkPush(sub, msg); err != nil {
		return hub.PushResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return hub.PushResult{}, hub.Wrap(hub.Unavailable, err, "the push was abandoned")
	}
	p.mu.Lock()
	s, ok := p.scripts[sub.Endpoint]
	p.mu.Unlock()
	if !ok {
		s.status = 201
	}
	push := FakePush{Subscription: sub, Message: msg, Err: s.err}
	push.Message.Payload = bytes.Clone(msg.Payload)
	push.Message.TTL = msg.TTL.Truncate(time.Second)
	switch {
	case s.hang:
		<-ctx.Done()
		push.Err = hub.Wrap(hub.Unavailable, ctx.Err(), "the push was abandoned")
	case s.err == nil:
		push.Result, push.Err = classifyPush(s.status, s.retryAfter)
	}
	p.mu.Lock()
	p.pushes = append(p.pushes, push)
	if p.grew != nil {
		close(p.grew)
		p.grew = nil
	}
	p.mu.Unlock()
	return push.Result, push.Err
}

// Wait returns the pushes once at least n reached the fake, or ctx's
// error.
func (p *Pusher) Wait(ctx context.Context, n int) ([]FakePush, error) {
	for {
		p.mu.Lock()
		if len(p.pushes) >= n {
			out := slices.Clone(p.pushes)
			p.mu.Unlock()
			return out, nil
		}
		if p.grew == nil {
			p.grew = make(chan struct{})
		}
		grew := p.grew
		p.mu.Unlock()
		select {
		case <-grew:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// classifyPush reads a scripted answer as the real Pusher reads a push
// service's: a status no outcome has (a redirect, one out of range) is
// an error.
func classifyPush(status int, retryAfter time.Duration) (hub.PushResult, error) {
	res := hub.PushResult{Status: status}
	switch {
	case status >= 200 && status <= 299:
		res.Outcome = hub.PushAccepted
	case status == 404 || status == 410:
		res.Outcome = hub.PushGone
	case status == 429 || status >= 500 && status <= 599:
		res.Outcome = hub.PushRetry
		res.RetryAfter = min(max(retryAfter, 0), 300*time.Second)
	case status >= 400 && status <= 499:
		res.Outcome = hub.PushRejected
	default:
		return hub.PushResult{}, hub.Errorf(hub.Unavailable, "the push service answered with a status that is no outcome (%d)", status)
	}
	return res, nil
}

// checkPush refuses what the real Pusher refuses, in words that never
// quote the subscription or the payload.
func checkPush(sub hub.PushSubscription, msg hub.PushMessage) error {
	u, err := url.Parse(sub.Endpoint)
	if err != nil || u.Scheme != "https" || u.Opaque != "" || u.Hostname() == "" || u.User != nil || u.Fragment != "" {
		return hub.Errorf(hub.Invalid, "the push subscription's endpoint is not a usable https URL")
	}
	if _, err := ecdh.P256().NewPublicKey(sub.P256DH); err != nil {
		return hub.Errorf(hub.Invalid, "the push subscription's p256dh is not a P-256 public key")
	}
	if len(sub.Auth) != 16 {
		return hub.Errorf(hub.Invalid, "the push subscription's auth secret is not 16 bytes")
	}
	switch {
	case len(msg.Payload) > maxPushPayload:
		return hub.Errorf(hub.Invalid, "the push payload is %d bytes; at most %d fit one message", len(msg.Payload), maxPushPayload)
	case msg.TTL < 0:
		return hub.Errorf(hub.Invalid, "the push TTL must not be negative")
	case !slices.Contains([]string{"", "very-low", "low", "normal", "high"}, msg.Urgency):
		return hub.Errorf(hub.Invalid, "the push urgency must be very-low, low, normal or high")
	case len(msg.Topic) > 32 || strings.Trim(msg.Topic, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "":
		return hub.Errorf(hub.Invalid, "the push topic must be at most 32 base64url characters")
	}
	return nil
}
