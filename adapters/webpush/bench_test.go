package webpush

import (
	"crypto/ecdh"
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
)

// What one push costs. Run: go test ./adapters/webpush -run '^$' -bench . -benchmem
//
// BenchmarkEncrypt is one message's encryption alone (a fresh key and
// salt, the ECDH, the HKDF steps, the seal) of a 512-byte payload, about
// the size of the Hub's notification payloads. BenchmarkPush is the whole
// Push to the fake push service over loopback HTTPS/2, with a reused
// token and connection (the service's verification and decryption
// included).

func BenchmarkEncrypt(b *testing.B) {
	ua, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	auth, payload := make([]byte, authSize), make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		s, err := newSender()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := encrypt(s, ua.PublicKey(), auth, payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPush(b *testing.B) {
	svc := pushservice.New(b, pushservice.Options{})
	p, err := New(Options{KeyFile: filepath.Join(b.TempDir(), "k"), Contact: "mailto:ops@example.com", Client: svc.Client()})
	if err != nil {
		b.Fatal(err)
	}
	svc.SetVAPIDPublicKey(p.PublicKey())
	sub, msg := svc.NewSubscription(), hub.PushMessage{Payload: make([]byte, 512)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Push(b.Context(), sub, msg); err != nil {
			b.Fatal(err)
		}
	}
}
