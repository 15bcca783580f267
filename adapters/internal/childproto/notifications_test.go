package childproto_test

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

func TestNotificationsRequestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cursor, uri string
	}{
		{"", "/_wharf/notifications"},
		{"0f3a:12", "/_wharf/notifications?cursor=0f3a%3A12"},
		{"a&b=c+d", "/_wharf/notifications?cursor=a%26b%3Dc%2Bd"},
		{strings.Repeat("c", childproto.MaxNotificationCursorBytes), "/_wharf/notifications?cursor=" + strings.Repeat("c", 256)},
	} {
		is := is.New(t)
		uri, err := childproto.NotificationsRequest{Cursor: tc.cursor}.URI()
		is.NoErr(err)         // encoded
		is.Equal(uri, tc.uri) // as the child's endpoint, escaped
		u, err := url.Parse(uri)
		is.NoErr(err)
		is.Equal(u.Path, childproto.NotificationsPath) // its path
		got, err := childproto.ParseNotificationsQuery(u.Query())
		is.NoErr(err)                   // decoded
		is.Equal(got.Cursor, tc.cursor) // the cursor back
	}
	for _, bad := range []string{strings.Repeat("c", 257), "a b", "a\nb", "é"} {
		is := is.New(t)
		_, err := childproto.NotificationsRequest{Cursor: bad}.URI()
		is.True(errors.Is(err, childproto.ErrBadNotificationsRequest)) // no frame carries such a cursor
	}
}

func TestNotificationsQueryRefusals(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"key=a", "cursor=a&cursor=b", "cursor=a&x=1", "cursor=" + strings.Repeat("c", 257)} {
		is := is.New(t)
		v, err := url.ParseQuery(q)
		is.NoErr(err)
		_, err = childproto.ParseNotificationsQuery(v)
		is.True(errors.Is(err, childproto.ErrBadQuery)) // a 400
	}
}

var (
	pendingQuestion = hub.Notification{ID: `["codex","codex:s1","question-pending","q1"]`, ConversationID: "codex:s1",
		SourceID: "q1", Kind: hub.NotifyQuestionPending, CreatedAt: time.UnixMilli(1764061200123).UTC()}
	pendingPermission = hub.Notification{ID: `["codex","codex:s2","permission-pending","p1"]`, ConversationID: "codex:s2",
		SourceID: "p1", Kind: hub.NotifyPermissionPending, CreatedAt: time.UnixMilli(1764061200456).UTC()}
	completedTurn = hub.Notification{ID: `["codex","codex:s1","turn-completed","t1"]`, ConversationID: "codex:s1",
		SourceID: "t1", Kind: hub.NotifyTurnCompleted, CreatedAt: time.UnixMilli(1764061200789).UTC()}
)

func TestNotificationFramesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		frame hub.NotificationFrame
		event string // the event's name
		data  string // its data, exactly
	}{
		{"an initial snapshot", hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: "e:0", Reason: "initial", Pending: []hub.Notification{}},
			"snapshot", `{"type":"snapshot","cursor":"e:0","reason":"initial","pending":[]}`},
		{"a gap", hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: "e:7", Reason: "gap", Pending: []hub.Notification{pendingQuestion, pendingPermission}},
			"snapshot", `{"type":"snapshot","cursor":"e:7","reason":"gap","pending":[` +
				`{"id":"[\"codex\",\"codex:s1\",\"question-pending\",\"q1\"]","conversationId":"codex:s1","sourceId":"q1","kind":"question-pending","createdAt":1764061200123},` +
				`{"id":"[\"codex\",\"codex:s2\",\"permission-pending\",\"p1\"]","conversationId":"codex:s2","sourceId":"p1","kind":"permission-pending","createdAt":1764061200456}]}`},
		{"a notification", hub.NotificationFrame{Type: hub.NoticeEvent, Cursor: "e:8", Notification: completedTurn},
			"event", `{"type":"event","cursor":"e:8","event":{"type":"notification","notification":` +
				`{"id":"[\"codex\",\"codex:s1\",\"turn-completed\",\"t1\"]","conversationId":"codex:s1","sourceId":"t1","kind":"turn-completed","createdAt":1764061200789}}}`},
		{"a resolution", hub.NotificationFrame{Type: hub.NoticeResolved, Cursor: "e:9", Notification: hub.Notification{ID: pendingQuestion.ID, ConversationID: "codex:s1"}},
			"event", `{"type":"event","cursor":"e:9","event":{"type":"resolved","id":"[\"codex\",\"codex:s1\",\"question-pending\",\"q1\"]","conversationId":"codex:s1"}}`},
		{"ready", hub.NotificationFrame{Type: hub.NoticeReady, Cursor: "e:9"}, "ready", `{"type":"ready","cursor":"e:9"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ev, err := childproto.EncodeNotificationFrame(tc.frame)
			is.NoErr(err)                      // encoded
			is.Equal(ev.Name, tc.event)        // as an event named by its type
			is.Equal(ev.ID, "")                // without an id
			is.Equal(string(ev.Data), tc.data) // in the wire's shape
			b, err := childproto.AppendEvent(nil, ev)
			is.NoErr(err) // framed
			back, err := childproto.DecodeNotificationFrame(readOne(t, b))
			is.NoErr(err)            // decoded
			is.Equal(back, tc.frame) // to the frame
		})
	}
}

func TestNotificationFrameRefusals(t *testing.T) {
	t.Parallel()
	n := `{"id":"[\"codex\",\"codex:s1\",\"turn-completed\",\"t1\"]","conversationId":"codex:s1","sourceId":"t1","kind":"turn-completed","createdAt":1}`
	with := func(old, new string) string { return strings.Replace(n, old, new, 1) }
	event := func(notification string) string {
		return `{"type":"event","cursor":"e:1","event":{"type":"notification","notification":` + notification + `}}`
	}
	long := strings.Repeat("x", childproto.MaxNotificationIDBytes)
	for _, tc := range []struct {
		name, event, id, data string
	}{
		{"an unknown event", "notice", "", `{"type":"notice","cursor":"e:1"}`},
		{"an event with an id", "ready", "e:1", `{"type":"ready","cursor":"e:1"}`},
		{"a type not the event's", "ready", "", `{"type":"event","cursor":"e:1","event":{"type":"resolved","id":"x","conversationId":"c"}}`},
		{"no cursor", "ready", "", `{"type":"ready"}`},
		{"an empty cursor", "ready", "", `{"type":"ready","cursor":""}`},
		{"a cursor too long", "ready", "", `{"type":"ready","cursor":"` + strings.Repeat("c", 257) + `"}`},
		{"a cursor with a space", "ready", "", `{"type":"ready","cursor":"e 1"}`},
		{"an unknown field", "ready", "", `{"type":"ready","cursor":"e:1","extra":1}`},
		{"a key given twice", "ready", "", `{"type":"ready","cursor":"e:1","cursor":"e:2"}`},
		{"a key spelt otherwise", "ready", "", `{"type":"ready","Cursor":"e:1"}`},
		{"data after the object", "ready", "", `{"type":"ready","cursor":"e:1"} {}`},
		{"not an object", "ready", "", `["ready"]`},
		{"not UTF-8", "ready", "", "{\"type\":\"ready\",\"cursor\":\"e:1\xff\"}"},
		{"a ready with pending", "ready", "", `{"type":"ready","cursor":"e:1","pending":[]}`},
		{"a snapshot of an unknown reason", "snapshot", "", `{"type":"snapshot","cursor":"e:1","reason":"later","pending":[]}`},
		{"a snapshot without pending", "snapshot", "", `{"type":"snapshot","cursor":"e:1","reason":"gap"}`},
		{"a snapshot of null", "snapshot", "", `{"type":"snapshot","cursor":"e:1","reason":"gap","pending":null}`},
		{"a snapshot with an event", "snapshot", "", `{"type":"snapshot","cursor":"e:1","reason":"gap","pending":[],"event":{"type":"resolved"}}`},
		{"an event without one", "event", "", `{"type":"event","cursor":"e:1"}`},
		{"an event of an unknown type", "event", "", `{"type":"event","cursor":"e:1","event":{"type":"finished","notification":` + n + `}}`},
		{"a notification of an unknown kind", "event", "", event(strings.ReplaceAll(n, "turn-completed", "turn-failed"))},
		{"a notification without its time", "event", "", event(with(`,"createdAt":1`, ""))},
		{"a notification of time zero", "event", "", event(with(`"createdAt":1`, `"createdAt":0`))},
		{"a notification without its source", "event", "", event(with(`"sourceId":"t1",`, ""))},
		{"a notification whose id is no tuple", "event", "", event(with(`"id":"[\"codex\",\"codex:s1\",\"turn-completed\",\"t1\"]"`, `"id":"t1"`))},
		{"a notification whose id names another source", "event", "", event(with(`"sourceId":"t1"`, `"sourceId":"t2"`))},
		{"a notification whose id names another conversation", "event", "", event(with(`"conversationId":"codex:s1"`, `"conversationId":"codex:s2"`))},
		{"a notification with an unknown field", "event", "", event(with(`"createdAt":1`, `"createdAt":1,"title":"x"`))},
		{"a null notification", "event", "", event("null")},
		{"a notification beside a resolution's fields", "event", "", `{"type":"event","cursor":"e:1","event":{"type":"notification","id":"x","notification":` + n + `}}`},
		{"a resolution without its conversation", "event", "", `{"type":"event","cursor":"e:1","event":{"type":"resolved","id":"x"}}`},
		{"a resolution with an id too long", "event", "", `{"type":"event","cursor":"e:1","event":{"type":"resolved","id":"` + long + `x","conversationId":"c"}}`},
		{"a resolution with a notification", "event", "", `{"type":"event","cursor":"e:1","event":{"type":"resolved","id":"x","conversationId":"c","notification":` + n + `}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := childproto.DecodeNotificationFrame(childproto.Event{Name: tc.event, ID: tc.id, Data: []byte(tc.data)})
			is.True(err != nil)                                                                       // refused
			is.True(!strings.Contains(err.Error(), "codex") && !strings.Contains(err.Error(), "e:1")) // without quoting the frame
		})
	}
	is := is.New(t)
	_, err := childproto.DecodeNotificationFrame(childproto.Event{Name: "ready",
		Data: []byte(`{"type":"ready","cursor":"e:1"}` + strings.Repeat(" ", childproto.MaxNotificationFrameBytes))})
	is.True(errors.Is(err, childproto.ErrEventTooLarge)) // a frame over the bound is refused
	_, err = childproto.EncodeNotificationFrame(hub.NotificationFrame{Type: hub.NoticeReady})
	is.True(errors.Is(err, childproto.ErrBadNotificationFrame)) // the child never sends what the Hub refuses
}

// A frame over MaxNotificationFrameBytes breaks the stream as the Hub
// reads it, rather than growing its memory.
func TestAFrameOverTheBoundBreaksTheStream(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	big := `{"type":"ready","cursor":"e:1","pad":"` + strings.Repeat("x", childproto.MaxNotificationFrameBytes) + `"}`
	r := childproto.NewEventReader(strings.NewReader("event: ready\ndata: "+big+"\n\n"), childproto.MaxNotificationFrameBytes)
	_, err := r.Next()
	is.True(errors.Is(err, childproto.ErrEventTooLarge)) // the connection breaks
	ok := `{"type":"ready","cursor":"e:1"}`
	r = childproto.NewEventReader(bytes.NewReader([]byte("event: ready\ndata: "+ok+"\n\n")), childproto.MaxNotificationFrameBytes)
	ev, err := r.Next()
	is.NoErr(err) // one within it reads
	_, err = childproto.DecodeNotificationFrame(ev)
	is.NoErr(err) // and decodes
}
