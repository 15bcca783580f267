package webpush_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const contact = "mailto:ops@example.com"

// recorder is a RoundTripper that sends nothing: it records each request
// with its body and answers what answer makes (201 when nil).
type recorder struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies [][]byte
	answer func(*http.Request) *http.Response
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.reqs, r.bodies = append(r.reqs, req), append(r.bodies, body)
	r.mu.Unlock()
	resp := &http.Response{StatusCode: http.StatusCreated, Header: http.Header{}}
	if r.answer != nil {
		resp = r.answer(req)
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	resp.Request = req
	return resp, nil
}

// last returns the last request and its body.
func (r *recorder) last(t *testing.T) (*http.Request, []byte) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("nothing was sent")
	}
	return r.reqs[len(r.reqs)-1], r.bodies[len(r.bodies)-1]
}

// newPusher returns a configured pusher over rec, its key in a fresh
// folder, its clock at epoch.
func newPusher(t *testing.T, rec http.RoundTripper, clock hub.Clock) *webpush.Pusher {
	t.Helper()
	if clock == nil {
		clock = fakes.NewClock(epoch)
	}
	p, err := webpush.New(webpush.Options{
		KeyFile: filepath.Join(t.TempDir(), "vapid.key"),
		Contact: contact,
		Client:  &http.Client{Transport: rec},
		Clock:   clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rfcSubscription is the browser of the RFC 8291 example, at endpoint.
func rfcSubscription(t *testing.T, endpoint string) hub.PushSubscription {
	return hub.PushSubscription{Endpoint: endpoint, P256DH: unb64(t, rfc.uaPublic), Auth: unb64(t, rfc.auth)}
}

func TestThePushOfTheRFC8291ExampleSendsItsBodyByteForByte(t *testing.T) {
	is := is.New(t)
	rec := &recorder{}
	p := newPusher(t, rec, nil)
	is.NoErr(webpush.UseSender(p, unb64(t, rfc.asPrivate), unb64(t, rfc.salt))) // the example's key and salt
	sub := rfcSubscription(t, "https://push.example.net/push/rfc")
	res, err := p.Push(t.Context(), sub, hub.PushMessage{Payload: []byte(rfc.plaintext), TTL: time.Minute})
	is.NoErr(err)                           // sent
	is.Equal(res.Outcome, hub.PushAccepted) // and accepted
	_, body := rec.last(t)
	is.Equal(body, unb64(t, rfc.body)) // the RFC's body, byte for byte
}

func TestEveryPushCarriesTheWebPushHeaders(t *testing.T) {
	for _, c := range []struct {
		name    string
		msg     hub.PushMessage
		headers map[string]string // "" for a header that must be absent
	}{
		{"ATTLOfZeroIsSent", hub.PushMessage{Payload: []byte("a")},
			map[string]string{"TTL": "0", "Urgency": "", "Topic": ""}},
		{"TheTTLIsInWholeSeconds", hub.PushMessage{Payload: []byte("abc"), TTL: 90*time.Second + 999*time.Millisecond},
			map[string]string{"TTL": "90"}},
		{"UrgencyAndTopicWhenSet", hub.PushMessage{TTL: time.Hour, Urgency: "high", Topic: "wharf_Topic-1"},
			map[string]string{"TTL": "3600", "Urgency": "high", "Topic": "wharf_Topic-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			rec := &recorder{}
			p := newPusher(t, rec, nil)
			sub := rfcSubscription(t, "https://push.example.net/push/abc?x=1")
			_, err := p.Push(t.Context(), sub, c.msg)
			is.NoErr(err) // sent
			req, body := rec.last(t)
			is.Equal(req.Method, http.MethodPost)                                   // a POST
			is.Equal(req.URL.String(), sub.Endpoint)                                // to the endpoint
			is.Equal(req.Header.Get("Content-Encoding"), "aes128gcm")               // RFC 8188's coding
			is.Equal(req.Header.Get("Content-Type"), "application/octet-stream")    // of bytes
			is.Equal(req.ContentLength, int64(86+len(c.msg.Payload)+17))            // header, payload, delimiter and tag
			is.Equal(len(body), 86+len(c.msg.Payload)+17)                           // all of it sent
			is.True(strings.HasPrefix(req.Header.Get("Authorization"), "vapid t=")) // a VAPID token
			for name, want := range c.headers {
				_, present := req.Header[http.CanonicalHeaderKey(name)]
				is.Equal(present, want != "")        // present exactly when set
				is.Equal(req.Header.Get(name), want) // with its value
			}
		})
	}
}

func TestEachPushIsEncryptedWithAFreshKeyAndSalt(t *testing.T) {
	is := is.New(t)
	rec := &recorder{}
	p := newPusher(t, rec, nil)
	sub := rfcSubscription(t, "https://push.example.net/push/abc")
	msg := hub.PushMessage{Payload: []byte("the same payload")}
	for range 2 {
		_, err := p.Push(t.Context(), sub, msg)
		is.NoErr(err) // sent
	}
	a, b := rec.bodies[0], rec.bodies[1]
	is.True(!bytes.Equal(a[:16], b[:16]))     // a fresh salt
	is.True(!bytes.Equal(a[21:86], b[21:86])) // a fresh key
	is.True(!bytes.Equal(a[86:], b[86:]))     // so a different ciphertext
}

func TestARedirectIsNeverFollowed(t *testing.T) {
	for _, c := range []struct {
		status   int
		location string
	}{
		{301, "https://elsewhere.example/push/x"},
		{302, "https://elsewhere.example/push/x"},
		{303, "https://elsewhere.example/push/x"},
		{307, "https://elsewhere.example/push/x"},
		{308, "/push/y"},
		{300, ""},
		{304, ""},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			is := is.New(t)
			rec := &recorder{answer: func(*http.Request) *http.Response {
				h := http.Header{}
				if c.location != "" {
					h.Set("Location", c.location)
				}
				return &http.Response{StatusCode: c.status, Header: h}
			}}
			p := newPusher(t, rec, nil)
			res, err := p.Push(t.Context(), rfcSubscription(t, "https://push.example.net/push/abc"), hub.PushMessage{})
			is.Equal(hub.KindOf(err), hub.Unavailable)           // an error: the message's fate is unknown
			is.True(strings.Contains(err.Error(), "redirect"))   // saying why
			is.True(!strings.Contains(err.Error(), "elsewhere")) // without the target
			is.Equal(res, hub.PushResult{})                      // no outcome
			is.Equal(len(rec.reqs), 1)                           // and nothing sent after it
		})
	}
}

func TestTheCallersClientIsLeftAsItWas(t *testing.T) {
	is := is.New(t)
	c := &http.Client{Transport: &recorder{}}
	_, err := webpush.New(webpush.Options{KeyFile: filepath.Join(t.TempDir(), "k"), Contact: contact, Client: c})
	is.NoErr(err)                   // started
	is.True(c.CheckRedirect == nil) // its redirect policy untouched
}

// endless is an answer body of a mebibyte, as good as endless for a
// reader bound to 4 KiB; it counts what is read.
type endless struct {
	mu     sync.Mutex
	read   int
	closed bool
}

func (e *endless) Read(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.read >= 1<<20 {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = 'x'
	}
	e.read += len(p)
	return len(p), nil
}

func (e *endless) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return nil
}

func TestAtMost4KiBOfAnAnswerIsRead(t *testing.T) {
	is := is.New(t)
	body := &endless{}
	rec := &recorder{answer: func(*http.Request) *http.Response {
		return &http.Response{StatusCode: 201, Header: http.Header{}, Body: body}
	}}
	p := newPusher(t, rec, nil)
	res, err := p.Push(t.Context(), rfcSubscription(t, "https://push.example.net/push/abc"), hub.PushMessage{})
	is.NoErr(err)                           // the answer is read
	is.Equal(res.Outcome, hub.PushAccepted) // and classified
	is.True(body.read <= 4096)              // from at most 4 KiB of its body
	is.True(body.closed)                    // which is closed
}

func TestTheVAPIDTokenIsAnES256JWTForThePushServicesOrigin(t *testing.T) {
	for _, c := range []struct{ endpoint, aud string }{
		{"https://push.example.net/push/abc", "https://push.example.net"},
		{"https://Push.Example.NET:443/push/abc?q=1", "https://push.example.net"},
		{"https://push.example.net:8443/push/abc", "https://push.example.net:8443"},
		{"https://[::1]:9443/push/abc", "https://[::1]:9443"},
	} {
		t.Run(c.aud, func(t *testing.T) {
			is := is.New(t)
			rec := &recorder{}
			p := newPusher(t, rec, nil)
			_, err := p.Push(t.Context(), rfcSubscription(t, c.endpoint), hub.PushMessage{})
			is.NoErr(err) // sent
			req, _ := rec.last(t)
			tok := readToken(t, req.Header.Get("Authorization"), p.PublicKey())
			is.Equal(tok.header, `{"typ":"JWT","alg":"ES256"}`)                                           // an ES256 JWT
			is.Equal(tok.claims, claims{Aud: c.aud, Exp: epoch.Add(12 * time.Hour).Unix(), Sub: contact}) // for the origin, 12 h, the contact
		})
	}
}

func TestATokenIsReusedForAnHourThenRenewed(t *testing.T) {
	is := is.New(t)
	rec := &recorder{}
	clock := fakes.NewClock(epoch)
	p := newPusher(t, rec, clock)
	push := func(endpoint string) string {
		_, err := p.Push(t.Context(), rfcSubscription(t, endpoint), hub.PushMessage{})
		is.NoErr(err) // sent
		req, _ := rec.last(t)
		return req.Header.Get("Authorization")
	}
	first := push("https://a.example/push/1")
	clock.Advance(59 * time.Minute)
	is.Equal(push("https://a.example/push/2"), first) // reused within the hour, for any endpoint of the origin
	other := push("https://b.example/push/1")
	is.True(other != first)                                                      // another origin has its own
	is.Equal(readToken(t, other, p.PublicKey()).claims.Aud, "https://b.example") // naming it
	clock.Advance(time.Minute)
	renewed := push("https://a.example/push/1")
	is.True(renewed != first)                                                                           // renewed after an hour
	is.Equal(readToken(t, renewed, p.PublicKey()).claims.Exp, epoch.Add(time.Hour+12*time.Hour).Unix()) // with a new exp
}

type claims struct {
	Aud string `json:"aud"`
	Exp int64  `json:"exp"`
	Sub string `json:"sub"`
}

// token is a verified VAPID token's parts.
type token struct {
	header string
	claims claims
}

// readToken reads an Authorization header "vapid t=<JWT>, k=<key>",
// checking k is public and that the JWT's signature, r || s, verifies
// with it.
func readToken(t *testing.T, header string, public []byte) token {
	t.Helper()
	is := is.New(t)
	rest, ok := strings.CutPrefix(header, "vapid t=")
	is.True(ok) // the vapid scheme, t first
	jwt, k, ok := strings.Cut(rest, ", k=")
	is.True(ok)                          // then k
	is.Equal(unb64(t, k), public)        // the Hub's public key
	is.True(verifyES256(t, jwt, public)) // the signature verifies with it
	parts := strings.Split(jwt, ".")
	var c claims
	dec := json.NewDecoder(bytes.NewReader(unb64(t, parts[1])))
	dec.DisallowUnknownFields()
	is.NoErr(dec.Decode(&c)) // aud, exp and sub, nothing else
	return token{header: string(unb64(t, parts[0])), claims: c}
}
