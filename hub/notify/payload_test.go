package notify_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// What a push message says (research §7.5, api/openapi.yaml PushPayload).

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestThePayloadIDIsStableAndDistinctPerDeliveryKey(t *testing.T) {
	is := is.New(t)
	id := notify.PayloadID(key)
	is.True(hex64.MatchString(id))                                                                                                                // 64 hex digits
	is.Equal(notify.PayloadID(key), id)                                                                                                           // the same on every attempt
	is.Equal(notify.PayloadID(hub.PushDeliveryKey{WorkspaceID: key.WorkspaceID, DeviceID: key.DeviceID, NotificationID: key.NotificationID}), id) // from the key's value alone
	keys := []hub.PushDeliveryKey{
		key,
		{WorkspaceID: "ws-b", DeviceID: key.DeviceID, NotificationID: key.NotificationID},
		{WorkspaceID: key.WorkspaceID, DeviceID: "dev2", NotificationID: key.NotificationID},
		{WorkspaceID: key.WorkspaceID, DeviceID: key.DeviceID, NotificationID: `["agent","agent:c1","question-pending","r2"]`},
		// The same characters split differently between the fields.
		{WorkspaceID: "a,b", DeviceID: "c", NotificationID: "n"},
		{WorkspaceID: "a", DeviceID: "b,c", NotificationID: "n"},
		{WorkspaceID: `a","b`, DeviceID: "c", NotificationID: "n"},
		{WorkspaceID: "a", DeviceID: `b","c`, NotificationID: "n"},
		{WorkspaceID: "ab", DeviceID: "c", NotificationID: "n"},
		{WorkspaceID: "a", DeviceID: "bc", NotificationID: "n"},
		{WorkspaceID: "a\x00b", DeviceID: "c", NotificationID: "n"},
		{WorkspaceID: "a", DeviceID: "b\x00c", NotificationID: "n"},
		{},
	}
	seen := map[string]hub.PushDeliveryKey{}
	for _, k := range keys {
		id := notify.PayloadID(k)
		other, dup := seen[id]
		is.True(!dup) // each key its own id
		if dup {
			t.Logf("%+v and %+v share %s", k, other, id)
		}
		seen[id] = k
	}
}

// delivery is a journaled delivery of kind k in workspace ws and
// conversation conv.
func delivery(ws, conv string, k hub.NotificationKind) hub.PushDelivery {
	n := note(k, t0.Add(1500*time.Millisecond).In(time.FixedZone("CET", 3600)))
	n.ConversationID = conv
	return notify.New(hub.PushDeliveryKey{WorkspaceID: ws, DeviceID: "dev", NotificationID: n.ID}, n, t0)
}

func TestThePayloadSaysWhatHappenedAndWhereToLook(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    hub.PushDelivery
		kind string
		body string
		url  string
	}{
		{"a finished turn", delivery("ws-a", "agent:c1", hub.NotifyTurnCompleted), "turn-completed", "Agent turn finished", "/w/ws-a/c/agent:c1"},
		{"a question", delivery("ws-a", "agent:c1", hub.NotifyQuestionPending), "question-pending", "An agent needs your answer", "/w/ws-a/c/agent:c1"},
		{"a permission", delivery("ws-a", "agent:c1", hub.NotifyPermissionPending), "permission-pending", "An agent asks for your permission", "/w/ws-a/c/agent:c1"},
		{"ids with a slash, a question mark and a space", delivery("ws/a?b", "agent:c/1 #2", hub.NotifyTurnCompleted), "turn-completed", "Agent turn finished", "/w/ws%2Fa%3Fb/c/agent:c%2F1%20%232"},
		{"no conversation", delivery("ws-a", "", hub.NotifyTurnCompleted), "turn-completed", "Agent turn finished", "/w/ws-a"},
		{"the test message", delivery("ws-a", "", ""), notify.KindTest, "Notifications from this Hub reach this device", "/settings"},
		{"a kind the dashboard does not know", delivery("ws-a", "agent:c1", "agent-crashed"), notify.KindTest, "Notifications from this Hub reach this device", "/settings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			p := notify.PayloadOf(tc.d, "Uatu")
			is.Equal(p.Version, 1)                                                    // version 1
			is.Equal(p.ID, notify.PayloadID(tc.d.Key))                                // the delivery's payload id
			is.Equal(p.Device, "dev")                                                 // the device, for the acknowledgement
			is.Equal(p.Kind, tc.kind)                                                 // the kind
			is.Equal(p.Title, "Uatu")                                                 // the workspace's name
			is.Equal(p.Body, tc.body)                                                 // what happened
			is.Equal(p.URL, tc.url)                                                   // where to look
			is.Equal(p.CreatedAt, "2026-03-14T09:26:54.5Z")                           // when, in UTC
			is.True(strings.HasPrefix(p.URL, "/") && !strings.HasPrefix(p.URL, "//")) // a path of the dashboard's own origin
			is.True(utf8.RuneCountInString(p.Body) <= 200)                            // the schema's bound
		})
	}
}

func TestTheTitleIsClippedAt120CharactersWithAnEllipsis(t *testing.T) {
	for _, tc := range []struct {
		name, title, want string
	}{
		{"a short name", "Uatu", "Uatu"},
		{"an empty name", "", ""},
		{"120 characters", strings.Repeat("w", 120), strings.Repeat("w", 120)},
		{"121 characters", strings.Repeat("w", 121), strings.Repeat("w", 119) + "…"},
		{"120 two-byte characters", strings.Repeat("é", 120), strings.Repeat("é", 120)},
		{"300 four-byte characters", strings.Repeat("🚢", 300), strings.Repeat("🚢", 119) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			p := notify.PayloadOf(delivery("ws-a", "agent:c1", hub.NotifyTurnCompleted), tc.title)
			is.Equal(p.Title, tc.want)                                  // clipped or whole
			is.True(utf8.RuneCountInString(p.Title) <= notify.MaxTitle) // within the schema's 120
		})
	}
}

// TestThePayloadMarshalsToTheSchemasClosedObject pins the JSON names the
// service worker reads.
func TestThePayloadMarshalsToTheSchemasClosedObject(t *testing.T) {
	is := is.New(t)
	b, err := json.Marshal(notify.PayloadOf(delivery("ws-a", "agent:c1", hub.NotifyQuestionPending), "Uatu"))
	is.NoErr(err)
	var m map[string]any
	is.NoErr(json.Unmarshal(b, &m))
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	is.Equal(names, []string{"body", "createdAt", "device", "id", "kind", "title", "url", "version"}) // exactly the schema's required fields
	is.Equal(m["version"], float64(1))                                                                // a number
	is.True(len(b) <= 3993)                                                                           // it fits one push record
}

// TestTheLargestPayloadFitsOnePushRecord: with every field at its bound
// and made of what JSON and path escaping grow most (a device id of 128
// "<", a 512-byte conversation id of "<", a 256-character workspace id),
// the payload stays within the 3,993 bytes one record carries.
func TestTheLargestPayloadFitsOnePushRecord(t *testing.T) {
	is := is.New(t)
	n := note(hub.NotifyPermissionPending, t0.Add(time.Nanosecond))
	n.ConversationID = strings.Repeat("<", 512)
	k := hub.PushDeliveryKey{WorkspaceID: strings.Repeat("w", 256), DeviceID: strings.Repeat("<", notify.MaxDeviceID), NotificationID: strings.Repeat("n", 512)}
	b, err := json.Marshal(notify.PayloadOf(notify.New(k, n, t0), strings.Repeat("<", 1000)))
	is.NoErr(err)
	t.Logf("largest payload: %d bytes", len(b))
	is.True(len(b) <= 3993) // one record
}
