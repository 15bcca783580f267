package webpush

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The VAPID token (RFC 8292): an ES256 JWT naming the push service's
// origin (aud), when it expires (exp) and the operator's contact (sub),
// sent as "Authorization: vapid t=<token>, k=<public key>".
const (
	// tokenLife is how far ahead a token's exp is. RFC 8292 allows at
	// most 24 h; half of that leaves room for a clock that is off.
	tokenLife = 12 * time.Hour
	// tokenReuse is how long a token is reused for its origin: Apple
	// asks not to renew one more often than once an hour.
	tokenReuse = time.Hour
	// maxTokens bounds the cache: one token per push service origin,
	// and there are a handful of those.
	maxTokens = 32
)

// jwtHeader is the token's fixed header, encoded.
var jwtHeader = b64(`{"typ":"JWT","alg":"ES256"}`)

// b64 is base64url without padding, the encoding of JWTs and of Web
// Push keys.
func b64[T string | []byte](v T) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }

// vapid signs tokens with the Hub's key and keeps them per origin.
type vapid struct {
	key     *ecdsa.PrivateKey
	contact string
	// k is the Authorization header's k parameter: the public key.
	k string

	mu     sync.Mutex
	tokens map[string]token
}

type token struct {
	header string
	minted time.Time
}

func newVapid(key *ecdsa.PrivateKey, public []byte, contact string) *vapid {
	return &vapid{key: key, contact: contact, k: b64(public), tokens: map[string]token{}}
}

// authorization returns the Authorization header for a push to the
// service at origin aud, at now: the token minted for aud less than
// tokenReuse ago, or a new one. A clock that went back renews it too.
func (v *vapid) authorization(aud string, now time.Time) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t, ok := v.tokens[aud]; ok && !now.Before(t.minted) && now.Sub(t.minted) < tokenReuse {
		return t.header, nil
	}
	jwt, err := v.sign(aud, now)
	if err != nil {
		return "", err
	}
	if len(v.tokens) >= maxTokens {
		clear(v.tokens)
	}
	h := "vapid t=" + jwt + ", k=" + v.k
	v.tokens[aud] = token{header: h, minted: now}
	return h, nil
}

// sign returns a new token for aud: the JWS compact serialization, its
// signature the 64 bytes r || s (RFC 7518 §3.4), not DER.
func (v *vapid) sign(aud string, now time.Time) (string, error) {
	var claims bytes.Buffer
	enc := json.NewEncoder(&claims)
	enc.SetEscapeHTML(false) // an https contact's & stays itself
	err := enc.Encode(struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}{aud, now.Add(tokenLife).Unix(), v.contact})
	if err != nil {
		return "", err
	}
	signed := jwtHeader + "." + b64(bytes.TrimSuffix(claims.Bytes(), []byte("\n")))
	digest := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, v.key, digest[:])
	if err != nil {
		return "", err
	}
	var sig [64]byte
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + b64(sig[:]), nil
}

// origin is the serialized origin (RFC 6454) of an https URL: the
// scheme, the host in lower case and the port unless it is 443.
func origin(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && p != "443" {
		host += ":" + p
	}
	return "https://" + host
}
