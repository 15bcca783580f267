package pushservice_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/pushservice"
)

var b64 = base64.RawURLEncoding

func unb64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := b64.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTheDecrypterOpensTheRFC8291Example(t *testing.T) {
	is := is.New(t)
	ua, err := ecdh.P256().NewPrivateKey(unb64(t, "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
	is.NoErr(err)
	body := unb64(t, "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"+
		"mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"+
		"pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
	got, err := pushservice.Decrypt(ua, unb64(t, "BTBZMqHH6r4Tts7J_aSIgg"), body)
	is.NoErr(err)                                                      // the example opens
	is.Equal(string(got), "When I grow up, I want to be a watermelon") // to its plaintext
	_, err = pushservice.Decrypt(ua, make([]byte, 16), body)
	is.True(err != nil) // and not with another auth secret
}

// hubKey is a VAPID key pair for the tests that write their own pushes.
type hubKey struct {
	key    *ecdsa.PrivateKey
	public []byte
}

func newHubKey(t *testing.T) hubKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return hubKey{k, pub}
}

// authorization signs claims as an ES256 JWT with header head.
func (h hubKey) authorization(t *testing.T, head string, claims map[string]any) string {
	c, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	signed := b64.EncodeToString([]byte(head)) + "." + b64.EncodeToString(c)
	d := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, h.key, d[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signed + "." + b64.EncodeToString(sig) + ", k=" + b64.EncodeToString(h.public)
}

func TestAPushThatFailsACheckIsRefusedAndRecorded(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	head := `{"typ":"JWT","alg":"ES256"}`
	for _, c := range []struct {
		name   string
		edit   func(t *testing.T, h hubKey, claims map[string]any, req *http.Request)
		status int
		reason string
	}{
		{"NoAuthorization", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) { r.Header.Del("Authorization") }, 403, "not vapid"},
		{"AnotherKeysToken", func(t *testing.T, _ hubKey, cl map[string]any, r *http.Request) {
			r.Header.Set("Authorization", newHubKey(t).authorization(t, head, cl))
		}, 403, "not the Hub's public key"},
		{"AForgedSignature", func(t *testing.T, h hubKey, cl map[string]any, r *http.Request) {
			other := newHubKey(t)
			other.public = h.public
			r.Header.Set("Authorization", other.authorization(t, head, cl))
		}, 403, "does not verify"},
		{"AnHS256Token", func(t *testing.T, h hubKey, cl map[string]any, r *http.Request) {
			r.Header.Set("Authorization", h.authorization(t, `{"typ":"JWT","alg":"HS256"}`, cl))
		}, 403, "not an ES256"},
		{"AnotherAudience", func(_ *testing.T, _ hubKey, cl map[string]any, _ *http.Request) {
			cl["aud"] = "https://push.example.net"
		}, 403, "aud"},
		{"AnExpiredToken", func(_ *testing.T, _ hubKey, cl map[string]any, _ *http.Request) { cl["exp"] = now.Unix() }, 403, "expired"},
		{"ATokenForMoreThanADay", func(_ *testing.T, _ hubKey, cl map[string]any, _ *http.Request) {
			cl["exp"] = now.Add(24*time.Hour + time.Second).Unix()
		}, 403, "24 h"},
		{"NoSub", func(_ *testing.T, _ hubKey, cl map[string]any, _ *http.Request) { delete(cl, "sub") }, 403, "lacks"},
		{"AnotherSub", func(_ *testing.T, _ hubKey, cl map[string]any, _ *http.Request) { cl["sub"] = "ops@example.com" }, 403, "sub"},
		{"NoTTL", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) { r.Header.Del("TTL") }, 400, "TTL"},
		{"ANegativeTTL", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) { r.Header.Set("TTL", "-1") }, 400, "TTL"},
		{"AnUnknownUrgency", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) { r.Header.Set("Urgency", "now") }, 400, "Urgency"},
		{"ALongTopic", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) {
			r.Header.Set("Topic", strings.Repeat("a", 33))
		}, 400, "Topic"},
		{"AnotherEncoding", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) {
			r.Header.Set("Content-Encoding", "aesgcm")
		}, 400, "Content-Encoding"},
		{"AnotherType", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) {
			r.Header.Set("Content-Type", "text/plain")
		}, 400, "Content-Type"},
		{"ABodyOver4096Bytes", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) {
			r.Body, r.ContentLength = http.NoBody, 0
			setBody(r, make([]byte, 4097))
		}, 413, "4096"},
		{"ABodyThatDoesNotDecrypt", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) { setBody(r, make([]byte, 200)) }, 400, "decrypt"},
		{"AnUnknownSubscription", func(_ *testing.T, _ hubKey, _ map[string]any, r *http.Request) { r.URL.Path = "/push/nobody" }, 404, "no such subscription"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			h := newHubKey(t)
			svc := pushservice.New(t, pushservice.Options{VAPIDPublicKey: h.public, Clock: fakes.NewClock(now)})
			sub := svc.NewSubscription()
			claims := map[string]any{"aud": "https://" + svc.Host(), "exp": now.Add(12 * time.Hour).Unix(), "sub": "mailto:ops@example.com"}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, sub.Endpoint, nil)
			is.NoErr(err)
			req.Header.Set("TTL", "60")
			req.Header.Set("Content-Encoding", "aes128gcm")
			req.Header.Set("Content-Type", "application/octet-stream")
			setBody(req, make([]byte, 103))
			c.edit(t, h, claims, req)
			if req.Header.Get("Authorization") == "" && c.name != "NoAuthorization" {
				req.Header.Set("Authorization", h.authorization(t, head, claims))
			}
			resp, err := svc.Client().Do(req)
			is.NoErr(err) // answered
			resp.Body.Close()
			is.Equal(resp.StatusCode, c.status) // refused
			f := svc.Failures()
			is.Equal(len(f), 1)                                                     // and recorded
			is.Equal(f[0].Status, c.status)                                         // with the status
			is.True(strings.Contains(f[0].Reason, c.reason))                        // and why
			is.Equal(len(svc.Messages()), 0)                                        // never as a message
			is.Equal(f[0].Subscription, strings.TrimPrefix(req.URL.Path, "/push/")) // to its subscription
		})
	}
}

func setBody(r *http.Request, b []byte) {
	r.Body, r.ContentLength = nopCloser{bytes.NewReader(b)}, int64(len(b))
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func TestWaitEndsWithItsContext(t *testing.T) {
	is := is.New(t)
	svc := pushservice.New(t, pushservice.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := svc.Wait(ctx, 1)
	is.Equal(err, context.Canceled) // nothing came
	got, err := svc.Wait(t.Context(), 0)
	is.NoErr(err)         // none awaited
	is.Equal(len(got), 0) // none there
}
