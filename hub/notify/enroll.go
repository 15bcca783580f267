package notify

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// The enrollment's rules (PUT /api/hub/notifications): what the body may
// say, with the messages of the earlier implementation, which clients
// show.

// Limits of an enrollment.
const (
	MaxDeviceID      = 128  // characters of a device id
	MaxEndpoint      = 4096 // bytes of a subscription endpoint
	MaxWorkspaceIDs  = 256  // workspaces in a selection
	MaxDevicesOfUser = 32   // devices one user may enroll
)

// The refusals' messages.
const (
	msgSubscription = "invalid browser push subscription"
	msgPreferences  = "invalid notification preferences or workspace access"
	msgDeviceID     = "invalid device id"
)

// DefaultPushHosts are the push services' hosts an endpoint may name: a
// name, or "*." and a suffix any subdomain of which is allowed.
var DefaultPushHosts = []string{"fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com"}

// Allowlist says which endpoint hosts are push services. The zero value
// allows DefaultPushHosts.
type Allowlist struct {
	// Extra adds exact hosts, a port included when the service listens
	// on one (a private service, a test's "127.0.0.1:41234"). Only an
	// Extra entry allows a port.
	Extra []string
}

// Allows reports whether host (with its port, if any) is a push service's.
func (a Allowlist) Allows(host string) bool {
	host = strings.ToLower(host)
	if slices.Contains(a.Extra, host) {
		return true
	}
	if strings.Contains(host, ":") {
		return false
	}
	for _, h := range DefaultPushHosts {
		if suffix, ok := strings.CutPrefix(h, "*"); ok {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
		} else if host == h {
			return true
		}
	}
	return false
}

// RawEnrollment is the body as the client sent it, field by field, so
// each field's refusal says what the rules say about it.
type RawEnrollment struct {
	ID            json.RawMessage `json:"id"`
	Subscription  json.RawMessage `json:"subscription"`
	WorkspaceIDs  json.RawMessage `json:"workspaceIds"`
	AllWorkspaces json.RawMessage `json:"allWorkspaces"`
	NeedsAnswer   json.RawMessage `json:"needsAnswer"`
	Completed     json.RawMessage `json:"completed"`
}

// Enrollment is an enrollment that passed the rules.
type Enrollment struct {
	// ID names the device to update; "" asks for a new one (or the one
	// enrolled with the same subscription).
	ID           string
	Subscription hub.PushSubscription
	// WorkspaceIDs is the selection, duplicates removed, in the client's
	// order.
	WorkspaceIDs  []string
	AllWorkspaces bool
	NeedsAnswer   bool
	Completed     bool
}

// ParseEnrollment applies the rules to a body: the subscription (its
// endpoint on allow, https, without userinfo, port or fragment; a valid
// P-256 point; a 16-byte secret), then the preferences (at most 256
// workspace ids, each registered; booleans), then the device id. Every
// refusal is Invalid with the rule's message.
func ParseEnrollment(raw RawEnrollment, allow Allowlist, registered func(id string) bool) (Enrollment, error) {
	var e Enrollment
	var err error
	if e.Subscription, err = parseSubscription(raw.Subscription, allow); err != nil {
		return Enrollment{}, err
	}
	prefs := hub.Errorf(hub.Invalid, msgPreferences)
	var ids []string
	if !decodeStrict(raw.WorkspaceIDs, &ids) || ids == nil || len(ids) > MaxWorkspaceIDs {
		return Enrollment{}, prefs
	}
	for _, id := range ids {
		if !registered(id) {
			return Enrollment{}, prefs
		}
		if !slices.Contains(e.WorkspaceIDs, id) {
			e.WorkspaceIDs = append(e.WorkspaceIDs, id)
		}
	}
	if e.WorkspaceIDs == nil {
		e.WorkspaceIDs = []string{}
	}
	if !decodeBool(raw.NeedsAnswer, &e.NeedsAnswer, false) || !decodeBool(raw.Completed, &e.Completed, false) ||
		!decodeBool(raw.AllWorkspaces, &e.AllWorkspaces, true) {
		return Enrollment{}, prefs
	}
	if raw.ID != nil { // absent for a new device; null is no id
		if !decodeStrict(raw.ID, &e.ID) || utf8.RuneCountInString(e.ID) > MaxDeviceID || !utf8.ValidString(e.ID) {
			return Enrollment{}, hub.Errorf(hub.Invalid, msgDeviceID)
		}
	}
	return e, nil
}

// CheckDeviceQuery checks the `device` query of GET (optional, at most
// 128 characters) and DELETE (required, 1-128).
func CheckDeviceQuery(id string, required bool) error {
	if (required && id == "") || utf8.RuneCountInString(id) > MaxDeviceID || !utf8.ValidString(id) {
		return hub.Errorf(hub.Invalid, msgDeviceID)
	}
	return nil
}

type rawSubscription struct {
	Endpoint       *string         `json:"endpoint"`
	ExpirationTime json.RawMessage `json:"expirationTime"`
	Keys           *struct {
		P256DH *string `json:"p256dh"`
		Auth   *string `json:"auth"`
	} `json:"keys"`
}

func parseSubscription(raw json.RawMessage, allow Allowlist) (hub.PushSubscription, error) {
	refused := hub.Errorf(hub.Invalid, msgSubscription)
	var s rawSubscription
	if !decodeStrict(raw, &s) || s.Endpoint == nil || s.Keys == nil || s.Keys.P256DH == nil || s.Keys.Auth == nil {
		return hub.PushSubscription{}, refused
	}
	if s.ExpirationTime != nil && !isNull(s.ExpirationTime) {
		var f float64
		if !decodeStrict(s.ExpirationTime, &f) {
			return hub.PushSubscription{}, refused
		}
	}
	if !validEndpoint(*s.Endpoint, allow) {
		return hub.PushSubscription{}, refused
	}
	p256dh, ok := decodeKey(*s.Keys.P256DH, 87)
	if !ok || len(p256dh) != 65 || p256dh[0] != 4 {
		return hub.PushSubscription{}, refused
	}
	if _, err := ecdh.P256().NewPublicKey(p256dh); err != nil { // on the curve
		return hub.PushSubscription{}, refused
	}
	auth, ok := decodeKey(*s.Keys.Auth, 22)
	if !ok || len(auth) != 16 || len(*s.Keys.Auth) != 22 { // unpadded, as browsers give it
		return hub.PushSubscription{}, refused
	}
	return hub.PushSubscription{Endpoint: *s.Endpoint, P256DH: p256dh, Auth: auth}, nil
}

// validEndpoint: https, a push service's host, nothing a browser's
// subscription never has (userinfo, a port unless allowed, a fragment).
func validEndpoint(endpoint string, allow Allowlist) bool {
	// "https://" as browsers write it: the contract's pattern, which
	// url.Parse alone would not hold (it lowercases the scheme).
	if len(endpoint) > MaxEndpoint || !utf8.ValidString(endpoint) || !strings.HasPrefix(endpoint, "https://") {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Fragment != "" || strings.Contains(endpoint, "#") ||
		u.Host == "" || u.Opaque != "" {
		return false
	}
	if strings.HasSuffix(u.Host, ":") {
		return false
	}
	return allow.Allows(u.Host)
}

// decodeKey reads unpadded base64url of n characters, allowing up to two
// trailing "=".
func decodeKey(s string, n int) ([]byte, bool) {
	trimmed := strings.TrimRight(s, "=")
	if len(s)-len(trimmed) > 2 || len(trimmed) != n {
		return nil, false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(trimmed)
	return b, err == nil
}

// decodeStrict decodes raw into v, refusing unknown fields, trailing data
// and an absent value.
func decodeStrict(raw json.RawMessage, v any) bool {
	if raw == nil || isNull(raw) {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(v) != nil {
		return false
	}
	return !d.More()
}

// decodeBool reads a boolean; an absent one is false when optional.
func decodeBool(raw json.RawMessage, v *bool, optional bool) bool {
	if raw == nil {
		return optional
	}
	return decodeStrict(raw, v)
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
