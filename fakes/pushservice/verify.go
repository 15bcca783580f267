package pushservice

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"time"
)

// Claims are the claims of a VAPID token the service verified.
type Claims struct {
	Aud string
	Exp time.Time
	Sub string
}

// verifyVAPID checks an Authorization header as a push service does (RFC
// 8292): "vapid t=<JWT>, k=<key>", k the key the service was given, the
// JWT an ES256 one signed by it, its aud the service's origin, its exp
// after now and at most 24 h ahead, its sub a mailto: or https: contact.
func verifyVAPID(header string, public []byte, origin string, now time.Time) (Claims, error) {
	scheme, params, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "vapid") {
		return Claims{}, errors.New("the Authorization scheme is not vapid")
	}
	var t, k string
	for p := range strings.SplitSeq(params, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch name {
		case "t":
			t = value
		case "k":
			k = value
		}
	}
	if len(public) == 0 {
		return Claims{}, errors.New("the service was given no VAPID public key")
	}
	if k != base64.RawURLEncoding.EncodeToString(public) {
		return Claims{}, errors.New("k is not the Hub's public key")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), public)
	if err != nil {
		return Claims{}, errors.New("the Hub's public key is not a P-256 point")
	}

	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return Claims{}, errors.New("t is not a JWT")
	}
	var head struct{ Typ, Alg string }
	if err := decodeJSON(parts[0], &head); err != nil || head.Alg != "ES256" || head.Typ != "" && head.Typ != "JWT" {
		return Claims{}, errors.New("the JWT's header is not an ES256 one")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return Claims{}, errors.New("the JWT's signature is not 64 bytes of r || s")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return Claims{}, errors.New("the JWT's signature does not verify")
	}

	var claims struct {
		Aud *string
		Exp *json.Number
		Sub *string
	}
	if err := decodeJSON(parts[1], &claims); err != nil || claims.Aud == nil || claims.Exp == nil || claims.Sub == nil {
		return Claims{}, errors.New("the JWT lacks aud, exp or sub")
	}
	exp, err := claims.Exp.Int64()
	if err != nil {
		return Claims{}, errors.New("the JWT's exp is not a whole number of seconds")
	}
	c := Claims{Aud: *claims.Aud, Exp: time.Unix(exp, 0), Sub: *claims.Sub}
	switch {
	case c.Aud != origin:
		return c, errors.New("the JWT's aud is not the service's origin")
	case !c.Exp.After(now):
		return c, errors.New("the JWT has expired")
	case c.Exp.After(now.Add(24 * time.Hour)):
		return c, errors.New("the JWT's exp is more than 24 h ahead")
	case !strings.HasPrefix(c.Sub, "mailto:") && !strings.HasPrefix(c.Sub, "https:"):
		return c, errors.New("the JWT's sub is not a mailto: or https: contact")
	}
	return c, nil
}

// decodeJSON decodes one base64url JSON object strictly.
func decodeJSON(part string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
