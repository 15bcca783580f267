package webpush_test

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
)

// TestTheConformanceSuite runs the Pusher contract on the real Pusher
// sending to the fake push service, which verifies and decrypts each
// message as a push service and a browser would.
func TestTheConformanceSuite(t *testing.T) {
	porttest.Pusher(t, func(t *testing.T) porttest.PushScene {
		return &serviceScene{svc: pushservice.New(t, pushservice.Options{}), keyFile: filepath.Join(t.TempDir(), "vapid.key")}
	})
}

// serviceScene is a Hub whose state is keyFile, and the push service.
type serviceScene struct {
	svc     *pushservice.Service
	keyFile string
}

func (s *serviceScene) Start(t *testing.T) hub.Pusher { return s.start(t, contact) }

func (s *serviceScene) StartUnconfigured(t *testing.T) hub.Pusher { return s.start(t, "") }

func (s *serviceScene) start(t *testing.T, contact string) hub.Pusher {
	t.Helper()
	p, err := webpush.New(webpush.Options{KeyFile: s.keyFile, Contact: contact, Client: s.svc.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if p.Configured() {
		s.svc.SetVAPIDPublicKey(p.PublicKey())
	}
	return p
}

func (s *serviceScene) Subscribe(*testing.T) hub.PushSubscription { return s.svc.NewSubscription() }

func (s *serviceScene) Answer(_ *testing.T, sub hub.PushSubscription, status int, retryAfter time.Duration) {
	r := pushservice.Reply{Status: status}
	if retryAfter > 0 {
		r.RetryAfter = strconv.Itoa(int(retryAfter / time.Second))
	}
	s.svc.Reply(sub, r)
}

func (s *serviceScene) Hang(_ *testing.T, sub hub.PushSubscription) {
	s.svc.Reply(sub, pushservice.Reply{Hang: true})
}

func (s *serviceScene) Received(t *testing.T, sub hub.PushSubscription) []hub.PushMessage {
	if f := s.svc.Failures(); len(f) > 0 {
		t.Fatalf("the push service refused a push: %+v", f[0])
	}
	var got []hub.PushMessage
	for _, m := range s.svc.Messages() {
		if m.Subscription == s.svc.ID(sub) {
			got = append(got, hub.PushMessage{Payload: m.Payload, TTL: m.TTL, Urgency: m.Urgency, Topic: m.Topic})
		}
	}
	return got
}

// Secrets are the key file and the private key it holds, as PEM,
// base64 and hex.
func (s *serviceScene) Secrets(t *testing.T) []string {
	content, err := os.ReadFile(s.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(content)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := k.(*ecdsa.PrivateKey).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		string(content), base64.StdEncoding.EncodeToString(block.Bytes),
		base64.RawURLEncoding.EncodeToString(raw), base64.StdEncoding.EncodeToString(raw), hex.EncodeToString(raw), string(raw),
	}
}
