// Package pushservice is a fake Web Push service (RFC 8030) for tests of
// the Hub's Pusher: it checks every message as a real service and a
// browser together would, and tells the test what arrived.
//
// It serves HTTPS on 127.0.0.1 under a certificate authority made in
// memory for it alone (Client trusts it; nothing else does). A test makes
// subscriptions (NewSubscription: a browser's key pair and auth secret,
// and an endpoint https://<host>/push/<id>) and gives the service the
// Hub's VAPID public key. For each push it verifies the VAPID token
// (signature by that key, aud its origin, exp ahead by at most 24 h, a
// mailto: or https: sub), the headers (TTL, Urgency, Topic,
// Content-Encoding aes128gcm, Content-Type), the 4,096-byte bound, then
// decrypts the body with the subscriber's key (Decrypt). A push that
// fails any of it is answered 400, 403, 404, 405 or 413 and recorded as a
// Failure with the reason; one that passes is recorded as a Message with
// its plaintext, then answered as the test scripted for its subscription
// (Reply: 201 by default; any status, Retry-After, a redirect, an endless
// body, or no answer until Release or Close).
//
// Records are read as they are (Messages, Failures) or waited for
// (Wait, WaitFailures), which never sleep. Safe for concurrent use.
package pushservice

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// maxBody is the largest body the service takes (RFC 8030 §7.2 obliges
// a service to take 4,096 bytes).
const maxBody = 4096

// Options configure a Service.
type Options struct {
	// VAPIDPublicKey is the Hub's public key, a 65-byte uncompressed
	// P-256 point (SetVAPIDPublicKey sets it later).
	VAPIDPublicKey []byte
	// Clock is what a token's exp and a record's At are read against;
	// default hub.SystemClock.
	Clock hub.Clock
}

// Reply is how the service answers the pushes to one subscription that
// pass its checks.
type Reply struct {
	// Status is the answer's status; 0 is 201 Created.
	Status int
	// RetryAfter and Location are sent as those headers when set.
	RetryAfter string
	Location   string
	// Body is the answer's body; with EndlessBody, the service writes
	// until the client goes (at most 64 MiB).
	Body        []byte
	EndlessBody bool
	// Hang holds the push unanswered, after recording it, until Release,
	// Close or the client gives up.
	Hang bool
}

// Message is one push that passed the service's checks.
type Message struct {
	// Subscription is the id of the subscription it was sent to.
	Subscription string
	// Payload is the decrypted payload; Body what came on the wire.
	Payload, Body []byte
	TTL           time.Duration
	// Urgency and Topic are their headers ("" when absent).
	Urgency, Topic string
	// Claims are the VAPID token's.
	Claims Claims
	// Status is what the service answered (or will, once released).
	Status int
	At     time.Time
}

// Failure is one push the service refused before reading its payload.
type Failure struct {
	Subscription string
	Status       int
	Reason       string
	At           time.Time
}

// Service is a running fake push service.
type Service struct {
	srv    *httptest.Server
	client *http.Client
	caPEM  []byte
	clock  hub.Clock
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	public   []byte
	subs     map[string]*subscription
	messages []Message
	failures []Failure
	changed  chan struct{} // closed and replaced at each record
	release  chan struct{} // closed and replaced by Release
}

// subscription is a browser's side of one subscription.
type subscription struct {
	key   *ecdh.PrivateKey
	auth  []byte
	reply Reply
}

// New starts a service, closed when tb ends.
func New(tb testing.TB, opts Options) *Service {
	tb.Helper()
	s, err := Start(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Start starts a service outside a test (a benchmark); the caller closes
// it.
func Start(opts Options) (*Service, error) {
	ca, err := newAuthority()
	if err != nil {
		return nil, err
	}
	s := &Service{
		clock:   opts.Clock,
		closed:  make(chan struct{}),
		public:  bytes.Clone(opts.VAPIDPublicKey),
		subs:    map[string]*subscription{},
		changed: make(chan struct{}),
		release: make(chan struct{}),
		caPEM:   ca.pem,
	}
	if s.clock == nil {
		s.clock = hub.SystemClock{}
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.EnableHTTP2 = true
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.serving}, MinVersion: tls.VersionTLS12}
	s.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // an untrusting client's handshake is a test's own doing
	s.srv.StartTLS()
	s.client = &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: ca.pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}}
	return s, nil
}

// CAPEM returns the certificate of the service's authority, PEM-encoded:
// what a daemon trusts it with (--push-ca-file).
func (s *Service) CAPEM() []byte { return bytes.Clone(s.caPEM) }

// Client returns a client that trusts the service's certificate
// authority.
func (s *Service) Client() *http.Client { return s.client }

// Host returns the service's host:port.
func (s *Service) Host() string { return s.srv.Listener.Addr().String() }

// SetVAPIDPublicKey sets the Hub's public key the tokens must verify
// with.
func (s *Service) SetVAPIDPublicKey(k []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.public = bytes.Clone(k)
}

// NewSubscription makes a subscription as a browser would: a P-256 key
// pair and a 16-byte auth secret, at a fresh unguessable endpoint.
func (s *Service) NewSubscription() hub.PushSubscription {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	id := strings.ToLower(rand.Text())
	s.mu.Lock()
	s.subs[id] = &subscription{key: key, auth: auth}
	s.mu.Unlock()
	return hub.PushSubscription{
		Endpoint: "https://" + s.Host() + "/push/" + id,
		P256DH:   key.PublicKey().Bytes(),
		Auth:     bytes.Clone(auth),
	}
}

// ID returns the id of sub: its endpoint's last segment.
func (s *Service) ID(sub hub.PushSubscription) string {
	return sub.Endpoint[strings.LastIndexByte(sub.Endpoint, '/')+1:]
}

// Reply scripts how pushes to sub are answered from now on.
func (s *Service) Reply(sub hub.PushSubscription, r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := s.subs[s.ID(sub)]; x != nil {
		x.reply = r
	}
}

// Release answers every push held so far.
func (s *Service) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.release)
	s.release = make(chan struct{})
}

// Messages returns the messages recorded so far, oldest first.
func (s *Service) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// Failures returns the refusals recorded so far, oldest first.
func (s *Service) Failures() []Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// Wait returns the messages once at least n are recorded, or ctx's error.
func (s *Service) Wait(ctx context.Context, n int) ([]Message, error) {
	return wait(ctx, s, n, func() []Message { return s.messages })
}

// WaitFailures returns the refusals once at least n are recorded, or
// ctx's error.
func (s *Service) WaitFailures(ctx context.Context, n int) ([]Failure, error) {
	return wait(ctx, s, n, func() []Failure { return s.failures })
}

func wait[T any](ctx context.Context, s *Service, n int, list func() []T) ([]T, error) {
	for {
		s.mu.Lock()
		if l := list(); len(l) >= n {
			s.mu.Unlock()
			return slices.Clone(l), nil
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops the service, ending every held push. It may be called
// more than once.
func (s *Service) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.Close()
		s.client.CloseIdleConnections()
	})
}

// recordLocked wakes the waiters once a record was appended; s.mu is
// held.
func (s *Service) recordLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
