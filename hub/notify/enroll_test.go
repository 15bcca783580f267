package notify_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// The enrollment rules of research §7.3, row by row.

const (
	msgSubscription = "invalid browser push subscription"
	msgPreferences  = "invalid notification preferences or workspace access"
	msgDeviceID     = "invalid device id"
)

// refusal is one change that makes the valid body one the rules refuse.
type refusal struct {
	name  string
	path  string // the field changed, dotted
	value any    // its new value; absent removes it
	allow notify.Allowlist
}

// isRefused checks err is the rule's Invalid refusal with message.
func isRefused(t *testing.T, e notify.Enrollment, err error, message string) {
	t.Helper()
	is := is.New(t)
	var he *hub.Error
	is.True(errors.As(err, &he))                                                  // the refusal is a *hub.Error
	is.Equal(he.Kind, hub.Invalid)                                                // of kind Invalid (400)
	is.Equal(he.Message, message)                                                 // with the rule's message
	is.Equal(hub.KindOf(err), hub.Invalid)                                        // KindOf agrees
	is.True(e.ID == "" && e.Subscription.Endpoint == "" && e.WorkspaceIDs == nil) // and no enrollment
}

func TestASubscriptionTheRulesRefuseIsAnInvalidBrowserPushSubscription(t *testing.T) {
	k := newKeys(t)
	fcm := "https://fcm.googleapis.com/fcm/send/"
	local := notify.Allowlist{Extra: []string{"127.0.0.1:41234"}}
	long := fcm + strings.Repeat("x", notify.MaxEndpoint-len(fcm)+1)
	prefixed := append([]byte{2}, k.point[1:]...)
	compressed := append([]byte{2 + k.point[64]&1}, k.point[1:33]...)
	rows := []refusal{
		// The endpoint: https, no userinfo, port or fragment, at most 4096 bytes.
		{name: "an http endpoint", path: "subscription.endpoint", value: "http://fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint whose scheme is in capitals", path: "subscription.endpoint", value: "HTTPS://fcm.googleapis.com/fcm/send/x"},
		{name: "a wss endpoint", path: "subscription.endpoint", value: "wss://fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint with a user", path: "subscription.endpoint", value: "https://user@fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint with a user and password", path: "subscription.endpoint", value: "https://u:p@fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint with an empty userinfo", path: "subscription.endpoint", value: "https://@fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint with the default port", path: "subscription.endpoint", value: "https://fcm.googleapis.com:443/fcm/send/x"},
		{name: "an endpoint with another port", path: "subscription.endpoint", value: "https://fcm.googleapis.com:8443/fcm/send/x"},
		{name: "an endpoint with an empty port", path: "subscription.endpoint", value: "https://fcm.googleapis.com:/fcm/send/x"},
		{name: "an endpoint with a fragment", path: "subscription.endpoint", value: "https://fcm.googleapis.com/fcm/send/x#y"},
		{name: "an endpoint with an empty fragment", path: "subscription.endpoint", value: "https://fcm.googleapis.com/fcm/send/x#"},
		{name: "an endpoint of 4097 bytes", path: "subscription.endpoint", value: long},
		{name: "an empty endpoint", path: "subscription.endpoint", value: ""},
		{name: "an endpoint without a scheme", path: "subscription.endpoint", value: "fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint without a host", path: "subscription.endpoint", value: "https:///fcm/send/x"},
		{name: "an opaque endpoint", path: "subscription.endpoint", value: "https:fcm.googleapis.com/fcm/send/x"},
		{name: "an endpoint that does not parse", path: "subscription.endpoint", value: "https://fcm.googleapis.com\\@evil.example/x"},
		{name: "an endpoint that is not a string", path: "subscription.endpoint", value: 42},
		// The host: on the allow-list.
		{name: "an endpoint off the allow-list", path: "subscription.endpoint", value: "https://push.evil.example/x"},
		{name: "an allowed host as a prefix of another", path: "subscription.endpoint", value: "https://fcm.googleapis.com.evil.example/x"},
		{name: "an allowed host as the user of another", path: "subscription.endpoint", value: "https://fcm.googleapis.com@evil.example/x"},
		{name: "a subdomain of an exact host", path: "subscription.endpoint", value: "https://eu.fcm.googleapis.com/x"},
		{name: "the bare push.apple.com", path: "subscription.endpoint", value: "https://push.apple.com/3/device/x"},
		{name: "the bare notify.windows.com", path: "subscription.endpoint", value: "https://notify.windows.com/w/?token=x"},
		{name: "a host ending like a wildcard without its dot", path: "subscription.endpoint", value: "https://evilpush.apple.com/x"},
		{name: "a wildcard's suffix with an empty label", path: "subscription.endpoint", value: "https://.push.apple.com/x"},
		{name: "an allowed host in the path", path: "subscription.endpoint", value: "https://evil.example/web.push.apple.com"},
		{name: "an allowed host with a trailing dot", path: "subscription.endpoint", value: "https://fcm.googleapis.com./fcm/send/x"},
		{name: "a loopback address not on the list", path: "subscription.endpoint", value: "https://127.0.0.1/x"},
		{name: "an IPv6 loopback", path: "subscription.endpoint", value: "https://[::1]/x"},
		// Allowlist.Extra allows exactly its host:port, nothing more.
		{name: "an extra host on another port", path: "subscription.endpoint", value: "https://127.0.0.1:41235/x", allow: local},
		{name: "an extra host without its port", path: "subscription.endpoint", value: "https://127.0.0.1/x", allow: local},
		{name: "an extra host over http", path: "subscription.endpoint", value: "http://127.0.0.1:41234/x", allow: local},
		{name: "an extra host with a user", path: "subscription.endpoint", value: "https://u@127.0.0.1:41234/x", allow: local},
		{name: "an extra host with a fragment", path: "subscription.endpoint", value: "https://127.0.0.1:41234/x#f", allow: local},
		{name: "a default host on an extra's port", path: "subscription.endpoint", value: "https://fcm.googleapis.com:41234/x", allow: local},
		// p256dh: 87 base64url characters (up to two "="), a 65-byte point
		// starting 0x04, on the curve.
		{name: "a p256dh of 86 characters", path: "subscription.keys.p256dh", value: k.p256dh[:86]},
		{name: "a p256dh of 88 characters", path: "subscription.keys.p256dh", value: k.p256dh + "A"},
		{name: "a p256dh with three '='", path: "subscription.keys.p256dh", value: k.p256dh + "==="},
		{name: "a p256dh of 86 characters and '='", path: "subscription.keys.p256dh", value: k.p256dh[:86] + "="},
		{name: "a p256dh in base64, not base64url", path: "subscription.keys.p256dh", value: "+" + k.p256dh[1:]},
		{name: "a p256dh with a '=' inside", path: "subscription.keys.p256dh", value: k.p256dh[:40] + "=" + k.p256dh[41:]},
		{name: "a p256dh of 87 characters one a line break", path: "subscription.keys.p256dh", value: k.p256dh[:86] + "\n"},
		{name: "a p256dh not starting 0x04", path: "subscription.keys.p256dh", value: b64(prefixed)},
		{name: "a p256dh of zeros", path: "subscription.keys.p256dh", value: b64(make([]byte, 65))},
		{name: "a p256dh off the curve", path: "subscription.keys.p256dh", value: b64(offCurve(t, k))},
		{name: "a p256dh at the origin", path: "subscription.keys.p256dh", value: b64(append([]byte{4}, make([]byte, 64)...))},
		{name: "a compressed p256dh", path: "subscription.keys.p256dh", value: b64(compressed)},
		{name: "an empty p256dh", path: "subscription.keys.p256dh", value: ""},
		{name: "a p256dh that is not a string", path: "subscription.keys.p256dh", value: 4},
		// auth: 22 base64url characters, 16 bytes.
		{name: "an auth of 21 characters", path: "subscription.keys.auth", value: k.auth[:21]},
		{name: "an auth of 23 characters", path: "subscription.keys.auth", value: k.auth + "A"},
		{name: "an auth of 24 characters (18 bytes)", path: "subscription.keys.auth", value: b64(make([]byte, 18))},
		{name: "an auth padded to 24 characters", path: "subscription.keys.auth", value: k.auth + "=="},
		{name: "an auth in base64, not base64url", path: "subscription.keys.auth", value: "/" + k.auth[1:]},
		{name: "an auth of 22 characters two of them line breaks (15 bytes)", path: "subscription.keys.auth", value: b64(make([]byte, 15)) + "\n\n"},
		{name: "an empty auth", path: "subscription.keys.auth", value: ""},
		{name: "an auth that is not a string", path: "subscription.keys.auth", value: true},
		// Missing fields and wrong shapes.
		{name: "no subscription", path: "subscription", value: absent},
		{name: "a null subscription", path: "subscription", value: nil},
		{name: "a subscription that is a string", path: "subscription", value: "https://fcm.googleapis.com/fcm/send/x"},
		{name: "a subscription that is an array", path: "subscription", value: []any{}},
		{name: "no endpoint", path: "subscription.endpoint", value: absent},
		{name: "a null endpoint", path: "subscription.endpoint", value: nil},
		{name: "no keys", path: "subscription.keys", value: absent},
		{name: "null keys", path: "subscription.keys", value: nil},
		{name: "keys that are a string", path: "subscription.keys", value: "k"},
		{name: "no p256dh", path: "subscription.keys.p256dh", value: absent},
		{name: "a null p256dh", path: "subscription.keys.p256dh", value: nil},
		{name: "no auth", path: "subscription.keys.auth", value: absent},
		{name: "a null auth", path: "subscription.keys.auth", value: nil},
		{name: "a subscription field a browser never sends", path: "subscription.options", value: map[string]any{}},
		{name: "a keys field a browser never sends", path: "subscription.keys.private", value: "x"},
		// expirationTime: a number or null.
		{name: "an expirationTime that is a string", path: "subscription.expirationTime", value: "1767225600000"},
		{name: "an expirationTime that is a boolean", path: "subscription.expirationTime", value: false},
		{name: "an expirationTime that is an object", path: "subscription.expirationTime", value: map[string]any{}},
		{name: "an expirationTime too large for a number", path: "subscription.expirationTime", value: json.RawMessage("1e999")},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			e, err := parse(t, validBody(k).with(t, r.path, r.value), r.allow)
			isRefused(t, e, err, msgSubscription)
		})
	}
}

func TestPreferencesTheRulesRefuseAreInvalidPreferencesOrWorkspaceAccess(t *testing.T) {
	k := newKeys(t)
	many := make([]any, notify.MaxWorkspaceIDs+1)
	same := make([]any, notify.MaxWorkspaceIDs+1)
	for i := range many {
		many[i], same[i] = fmt.Sprintf("ws-%d", i), "ws-a"
	}
	rows := []refusal{
		{name: "no workspaceIds", path: "workspaceIds", value: absent},
		{name: "null workspaceIds", path: "workspaceIds", value: nil},
		{name: "workspaceIds that are a string", path: "workspaceIds", value: "ws-a"},
		{name: "workspaceIds that are an object", path: "workspaceIds", value: map[string]any{"ws-a": true}},
		{name: "workspaceIds that are a boolean", path: "workspaceIds", value: true},
		{name: "257 workspace ids", path: "workspaceIds", value: many},
		{name: "257 workspace ids all the same", path: "workspaceIds", value: same},
		{name: "a workspace id that is a number", path: "workspaceIds", value: []any{"ws-a", 7}},
		{name: "a workspace id that is null", path: "workspaceIds", value: []any{"ws-a", nil}},
		{name: "a workspace id that is an array", path: "workspaceIds", value: []any{[]any{"ws-a"}}},
		{name: "an unregistered workspace", path: "workspaceIds", value: []any{"ws-a", "elsewhere"}},
		{name: "an empty workspace id", path: "workspaceIds", value: []any{""}},
		{name: "no needsAnswer", path: "needsAnswer", value: absent},
		{name: "a null needsAnswer", path: "needsAnswer", value: nil},
		{name: "a needsAnswer that is a string", path: "needsAnswer", value: "true"},
		{name: "a needsAnswer that is a number", path: "needsAnswer", value: 1},
		{name: "no completed", path: "completed", value: absent},
		{name: "a null completed", path: "completed", value: nil},
		{name: "a completed that is a string", path: "completed", value: "false"},
		{name: "a completed that is a number", path: "completed", value: 0},
		{name: "a null allWorkspaces", path: "allWorkspaces", value: nil},
		{name: "an allWorkspaces that is a string", path: "allWorkspaces", value: "true"},
		{name: "an allWorkspaces that is a number", path: "allWorkspaces", value: 1},
		{name: "an allWorkspaces that is an array", path: "allWorkspaces", value: []any{true}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			e, err := parse(t, validBody(k).with(t, r.path, r.value), r.allow)
			isRefused(t, e, err, msgPreferences)
		})
	}
}

func TestADeviceIDTheRulesRefuseIsAnInvalidDeviceID(t *testing.T) {
	k := newKeys(t)
	rows := []refusal{
		{name: "an id that is a number", path: "id", value: 7},
		{name: "an id that is a boolean", path: "id", value: true},
		{name: "an id that is an object", path: "id", value: map[string]any{}},
		{name: "an id that is an array", path: "id", value: []any{"phone"}},
		{name: "an id that is null", path: "id", value: nil},
		{name: "an id of 129 characters", path: "id", value: strings.Repeat("d", 129)},
		{name: "an id of 129 two-byte characters", path: "id", value: strings.Repeat("é", 129)},
		{name: "an id of 129 emoji (surrogate pairs in JSON)", path: "id", value: json.RawMessage(`"` + strings.Repeat(`\ud83d\udd14`, 129) + `"`)},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			e, err := parse(t, validBody(k).with(t, r.path, r.value), r.allow)
			isRefused(t, e, err, msgDeviceID)
		})
	}
}

func TestTheSubscriptionIsJudgedFirstThenThePreferencesThenTheID(t *testing.T) {
	is := is.New(t)
	k := newKeys(t)
	all := validBody(k).with(t, "subscription.endpoint", "http://x").with(t, "needsAnswer", "yes").with(t, "id", 7)
	_, err := parse(t, all, notify.Allowlist{})
	is.Equal(err.Error(), msgSubscription) // a bad subscription is named first
	_, err = parse(t, all.with(t, "subscription.endpoint", "https://fcm.googleapis.com/x"), notify.Allowlist{})
	is.Equal(err.Error(), msgPreferences) // then bad preferences
	_, err = parse(t, all.with(t, "subscription.endpoint", "https://fcm.googleapis.com/x").with(t, "needsAnswer", false), notify.Allowlist{})
	is.Equal(err.Error(), msgDeviceID) // then a bad id
}

func TestAValidEnrollmentIsAcceptedAsTheClientSentIt(t *testing.T) {
	is := is.New(t)
	k := newKeys(t)
	e, err := parse(t, validBody(k), notify.Allowlist{})
	is.NoErr(err)
	is.Equal(e, notify.Enrollment{
		ID: "phone",
		Subscription: hub.PushSubscription{Endpoint: "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bH",
			P256DH: k.point, Auth: k.secret},
		WorkspaceIDs: []string{"ws-a", "ws-b"}, NeedsAnswer: true,
	}) // every field, the keys decoded
}

// TestTheRulesAcceptWhatBrowsersAndPushServicesSend copies the
// acceptance side of research §7.3.
func TestTheRulesAcceptWhatBrowsersAndPushServicesSend(t *testing.T) {
	k := newKeys(t)
	fcm := "https://fcm.googleapis.com/fcm/send/"
	longest := fcm + strings.Repeat("x", notify.MaxEndpoint-len(fcm))
	for _, tc := range []struct {
		name  string
		path  string
		value any
		allow notify.Allowlist
		check func(is *is.I, e notify.Enrollment)
	}{
		{name: "an FCM endpoint", path: "subscription.endpoint", value: "https://fcm.googleapis.com/wp/cXw:APA91b"},
		{name: "a Mozilla endpoint", path: "subscription.endpoint", value: "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABl"},
		{name: "an Apple endpoint", path: "subscription.endpoint", value: "https://web.push.apple.com/QGuQyavXutnMH"},
		{name: "a deeper Apple subdomain", path: "subscription.endpoint", value: "https://a.b.push.apple.com/x"},
		{name: "a Windows endpoint", path: "subscription.endpoint", value: "https://wns2-par02p.notify.windows.com/w/?token=BQYAAAD"},
		{name: "a host in capitals", path: "subscription.endpoint", value: "https://FCM.GoogleAPIs.com/fcm/send/x"},
		{name: "an endpoint of 4096 bytes", path: "subscription.endpoint", value: longest,
			check: func(is *is.I, e notify.Enrollment) { is.Equal(len(e.Subscription.Endpoint), notify.MaxEndpoint) }},
		{name: "an extra host on its port", path: "subscription.endpoint", value: "https://127.0.0.1:41234/push/1",
			allow: notify.Allowlist{Extra: []string{"127.0.0.1:41234"}},
			check: func(is *is.I, e notify.Enrollment) {
				is.Equal(e.Subscription.Endpoint, "https://127.0.0.1:41234/push/1")
			}},
		{name: "a p256dh padded with one '='", path: "subscription.keys.p256dh", value: k.p256dh + "=",
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.Subscription.P256DH, k.point) }},
		{name: "a p256dh padded with two '='", path: "subscription.keys.p256dh", value: k.p256dh + "==",
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.Subscription.P256DH, k.point) }},
		{name: "a null expirationTime", path: "subscription.expirationTime", value: nil},
		{name: "a numeric expirationTime", path: "subscription.expirationTime", value: 1767225600000},
		{name: "a fractional expirationTime", path: "subscription.expirationTime", value: json.RawMessage("1.7672256e12")},
		{name: "no expirationTime", path: "subscription.expirationTime", value: absent},
		{name: "duplicates, removed in order", path: "workspaceIds", value: []any{"ws-b", "ws-a", "ws-b", "ws-a", "ws-c"},
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.WorkspaceIDs, []string{"ws-b", "ws-a", "ws-c"}) }},
		{name: "an empty selection", path: "workspaceIds", value: []any{},
			check: func(is *is.I, e notify.Enrollment) {
				is.True(e.WorkspaceIDs != nil)   // an empty selection, not none
				is.Equal(len(e.WorkspaceIDs), 0) // and nothing in it
			}},
		{name: "256 workspaces", path: "workspaceIds", value: wsIDs(notify.MaxWorkspaceIDs),
			check: func(is *is.I, e notify.Enrollment) { is.Equal(len(e.WorkspaceIDs), notify.MaxWorkspaceIDs) }},
		{name: "allWorkspaces on", path: "allWorkspaces", value: true,
			check: func(is *is.I, e notify.Enrollment) {
				is.True(e.AllWorkspaces)                           // on
				is.Equal(e.WorkspaceIDs, []string{"ws-a", "ws-b"}) // the selection still kept
			}},
		{name: "no allWorkspaces, which is off", path: "allWorkspaces", value: absent,
			check: func(is *is.I, e notify.Enrollment) { is.True(!e.AllWorkspaces) }},
		{name: "both categories", path: "completed", value: true,
			check: func(is *is.I, e notify.Enrollment) { is.True(e.NeedsAnswer && e.Completed) }},
		{name: "no category", path: "needsAnswer", value: false,
			check: func(is *is.I, e notify.Enrollment) { is.True(!e.NeedsAnswer && !e.Completed) }},
		{name: "no id, asking for a new device", path: "id", value: absent,
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.ID, "") }},
		{name: "an id of 128 characters", path: "id", value: strings.Repeat("d", 128),
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.ID, strings.Repeat("d", 128)) }},
		{name: "an id of 128 two-byte characters", path: "id", value: strings.Repeat("é", 128),
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.ID, strings.Repeat("é", 128)) }},
		{name: "an id of 128 emoji", path: "id", value: strings.Repeat("🔔", 128),
			check: func(is *is.I, e notify.Enrollment) { is.Equal(e.ID, strings.Repeat("🔔", 128)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, err := parse(t, validBody(k).with(t, tc.path, tc.value), tc.allow)
			is.NoErr(err) // accepted
			if tc.check != nil {
				tc.check(is, e)
			}
		})
	}
}

func wsIDs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("ws-%d", i)
	}
	return out
}

func TestTheDefaultAllowListIsThePushServicesOfResearch(t *testing.T) {
	is := is.New(t)
	is.Equal(notify.DefaultPushHosts, []string{"fcm.googleapis.com", "updates.push.services.mozilla.com", "*.push.apple.com", "*.notify.windows.com"}) // research §7.3's list
	var zero notify.Allowlist
	is.True(zero.Allows("fcm.googleapis.com"))                                              // the zero value allows the defaults
	is.True(!zero.Allows("push.apple.com"))                                                 // but not a wildcard's bare suffix
	is.True(!zero.Allows("127.0.0.1:41234"))                                                // nor a port
	is.True(notify.Allowlist{Extra: []string{"127.0.0.1:41234"}}.Allows("127.0.0.1:41234")) // which only Extra allows
}

// TestTheDeviceQueryCountsCharacters copies the GET and DELETE rows of
// research §7.1: optional and at most 128 characters on GET, required
// and 1-128 on DELETE.
func TestTheDeviceQueryCountsCharacters(t *testing.T) {
	for _, tc := range []struct {
		name     string
		id       string
		required bool
		ok       bool
	}{
		{"GET without a device", "", false, true},
		{"GET with a one-character device", "d", false, true},
		{"GET with 128 characters", strings.Repeat("d", 128), false, true},
		{"GET with 128 two-byte characters", strings.Repeat("é", 128), false, true},
		{"GET with 128 four-byte characters", strings.Repeat("🔔", 128), false, true},
		{"GET with 129 characters", strings.Repeat("d", 129), false, false},
		{"GET with 129 two-byte characters", strings.Repeat("é", 129), false, false},
		{"GET with bytes that are not UTF-8", "\xff\xfe", false, false},
		{"DELETE without a device", "", true, false},
		{"DELETE with a one-character device", "d", true, true},
		{"DELETE with 128 characters", strings.Repeat("d", 128), true, true},
		{"DELETE with 128 four-byte characters", strings.Repeat("🔔", 128), true, true},
		{"DELETE with 129 characters", strings.Repeat("d", 129), true, false},
		{"DELETE with 129 two-byte characters", strings.Repeat("é", 129), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := notify.CheckDeviceQuery(tc.id, tc.required)
			if tc.ok {
				is.NoErr(err) // accepted
				return
			}
			var he *hub.Error
			is.True(errors.As(err, &he))      // refused with a *hub.Error
			is.Equal(he.Kind, hub.Invalid)    // of kind Invalid
			is.Equal(he.Message, msgDeviceID) // saying the device id is invalid
		})
	}
}

// TestAnEnrollmentBodyIsSplitByFieldName pins the JSON names RawEnrollment
// reads, which clients send.
func TestAnEnrollmentBodyIsSplitByFieldName(t *testing.T) {
	is := is.New(t)
	var r notify.RawEnrollment
	is.NoErr(json.Unmarshal([]byte(`{"id":"d","subscription":{},"workspaceIds":[],"allWorkspaces":true,"needsAnswer":false,"completed":true}`), &r))
	is.Equal(string(r.ID), `"d"`)             // id
	is.Equal(string(r.Subscription), `{}`)    // subscription
	is.Equal(string(r.WorkspaceIDs), `[]`)    // workspaceIds
	is.Equal(string(r.AllWorkspaces), `true`) // allWorkspaces
	is.Equal(string(r.NeedsAnswer), `false`)  // needsAnswer
	is.Equal(string(r.Completed), `true`)     // completed
}
