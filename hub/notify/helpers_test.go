package notify_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// t0 is when the tests' stories begin.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// keys is a browser's subscription key material, base64url as
// PushSubscription.toJSON() gives it, and the raw bytes.
type keys struct {
	p256dh, auth  string
	point, secret []byte
}

// newKeys makes a real P-256 key pair and a 16-byte secret.
func newKeys(t testing.TB) keys {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	point := k.PublicKey().Bytes()
	return keys{p256dh: b64(point), auth: b64(secret), point: point, secret: secret}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// offCurve returns k's point with the low bit of y flipped: the 0x04
// prefix and the length of a point, but not on the curve.
func offCurve(t testing.TB, k keys) []byte {
	t.Helper()
	p := append([]byte(nil), k.point...)
	p[64] ^= 1
	if _, err := ecdh.P256().NewPublicKey(p); err == nil {
		t.Fatal("the changed point is on the curve")
	}
	return p
}

// absent marks a field to leave out of a body.
type absentField struct{}

var absent = absentField{}

// body is an enrollment as a client sends it, before json.Unmarshal.
type body map[string]any

// validBody is an enrollment every rule accepts: an FCM subscription,
// two registered workspaces, needsAnswer only.
func validBody(k keys) body {
	return body{
		"id": "phone",
		"subscription": map[string]any{
			"endpoint":       "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bH",
			"expirationTime": nil,
			"keys":           map[string]any{"p256dh": k.p256dh, "auth": k.auth},
		},
		"workspaceIds":  []any{"ws-a", "ws-b"},
		"allWorkspaces": false,
		"needsAnswer":   true,
		"completed":     false,
	}
}

// with returns a copy of b whose field at the dotted path is v (absent
// removes it; a json.RawMessage goes in as it is).
func (b body) with(t testing.TB, path string, v any) body {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(path, ".")
	m := c
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is not an object", path, p)
		}
		m = next
	}
	last := parts[len(parts)-1]
	if v == absent {
		delete(m, last)
	} else {
		m[last] = v
	}
	return c
}

// registered says which workspaces exist and the caller can reach: those
// named "ws-…".
func registered(id string) bool { return strings.HasPrefix(id, "ws-") }

// raw splits a body into its fields as the HTTP adapter does.
func raw(t testing.TB, b body) notify.RawEnrollment {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var r notify.RawEnrollment
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// parse applies the rules to b.
func parse(t testing.TB, b body, allow notify.Allowlist) (notify.Enrollment, error) {
	t.Helper()
	return notify.ParseEnrollment(raw(t, b), allow, registered)
}

// note is a notification of kind k created at at.
func note(k hub.NotificationKind, at time.Time) hub.Notification {
	return hub.Notification{ID: `["agent","agent:c1","` + string(k) + `","r1"]`, ConversationID: "agent:c1",
		SourceID: "r1", Kind: k, CreatedAt: at}
}
