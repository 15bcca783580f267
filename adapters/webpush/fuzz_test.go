package webpush

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/wharfhub/wharf/fakes/pushservice"
	"github.com/wharfhub/wharf/hub"
)

// FuzzAnswer feeds any status and Retry-After to the classification of a
// push service's answer. It never panics; an outcome is the status's
// (2xx accepted, 404/410 gone, 429/5xx retry, other 4xx rejected) and
// anything else is an error without one; only a retry carries a
// Retry-After, within [0, 300 s].
func FuzzAnswer(f *testing.F) {
	for _, s := range []struct {
		status int
		value  string
	}{
		{201, ""}, {429, "120"}, {503, now.Add(time.Minute).Format(http.TimeFormat)}, {500, "soon"},
		{410, "5"}, {302, ""}, {429, "99999999999999999999"}, {503, "Sun, 06 Nov 1994 08:49:37 GMT"},
	} {
		f.Add(s.status, s.value, now.Unix())
	}
	f.Fuzz(func(t *testing.T, status int, value string, at int64) {
		res, err := classify(status, value, time.Unix(at, 0))
		var want hub.PushOutcome
		switch {
		case status >= 200 && status <= 299:
			want = hub.PushAccepted
		case status == 404 || status == 410:
			want = hub.PushGone
		case status == 429 || status >= 500 && status <= 599:
			want = hub.PushRetry
		case status >= 400 && status <= 499:
			want = hub.PushRejected
		}
		if want == 0 {
			if err == nil || res != (hub.PushResult{}) {
				t.Fatalf("status %d: %+v, %v; want an error alone", status, res, err)
			}
			return
		}
		if err != nil || res.Outcome != want || res.Status != status {
			t.Fatalf("status %d: %+v, %v; want outcome %d", status, res, err, want)
		}
		if res.RetryAfter < 0 || res.RetryAfter > maxRetryAfter || want != hub.PushRetry && res.RetryAfter != 0 {
			t.Fatalf("status %d, Retry-After %q: %v", status, value, res.RetryAfter)
		}
	})
}

// FuzzRoundTrip encrypts any payload of at most MaxPayload bytes for a
// fresh subscriber, with a fresh sender, and opens the body with the fake
// push service's decrypter, written from the browser's side: it gets the
// payload back; with any one byte changed (but for the record size,
// which one short record does not depend on) it is refused. Any bytes
// offered to the decrypter as a body are refused or opened, never a
// panic.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("When I grow up, I want to be a watermelon"), uint16(0))
	f.Add([]byte{}, uint16(85))
	f.Add(bytes.Repeat([]byte{0}, MaxPayload), uint16(4095))
	f.Add([]byte{2, 0, 0}, uint16(100))
	f.Fuzz(func(t *testing.T, payload []byte, flip uint16) {
		if len(payload) > MaxPayload {
			payload = payload[:MaxPayload]
		}
		ua, err := ecdh.P256().GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		auth := make([]byte, authSize)
		rand.Read(auth)
		s, err := newSender()
		if err != nil {
			t.Fatal(err)
		}
		body, err := encrypt(s, ua.PublicKey(), auth, payload)
		if err != nil {
			t.Fatal(err)
		}
		if len(body) != headerSize+len(payload)+1+tagSize || len(body) > recordSize {
			t.Fatalf("a %d-byte payload made a %d-byte body", len(payload), len(body))
		}
		got, err := pushservice.Decrypt(ua, auth, body)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("the round trip gave %x, %v", got, err)
		}
		if i := int(flip) % len(body); i < 16 || i >= 20 {
			changed := bytes.Clone(body)
			changed[i] ^= 0x80
			if got, err := pushservice.Decrypt(ua, auth, changed); err == nil {
				t.Fatalf("byte %d changed, and it still opened to %x", i, got)
			}
		}
		_, _ = pushservice.Decrypt(ua, auth, payload)
	})
}
