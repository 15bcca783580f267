package childproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/internal/jsonkeys"
	"github.com/wharfhub/wharf/hub"
)

// The notification feed: what the session announces for Web Push
// (hub.NotificationFeed). It is the Hub's own and no live topic (the topic
// table does not list it), so it has its own endpoint beside the feeds:
//
//	GET /_wharf/notifications[?cursor=CURSOR]
//
// with no other parameter; a cursor of more than MaxNotificationCursorBytes,
// one given twice, or another parameter answers 400. It answers like a
// feed (OpenStream), then one event per frame, named by the frame's type,
// whose data is the frame as one JSON object:
//
//	event: snapshot  {"type":"snapshot","cursor":C,"reason":"initial"|"gap","pending":[N,...]}
//	event: event     {"type":"event","cursor":C,"event":{"type":"notification","notification":N}}
//	event: event     {"type":"event","cursor":C,"event":{"type":"resolved","id":ID,"conversationId":CID}}
//	event: ready     {"type":"ready","cursor":C}
//
// where N is {"id","conversationId","sourceId","kind","createdAt"}:
// createdAt in epoch milliseconds, kind one of hub's NotificationKinds, id
// the JSON array [agentId, conversationId, kind, sourceId] of at most
// MaxNotificationIDBytes. Without a cursor the feed starts with a snapshot
// of reason "initial"; with one the child cannot resume, one of reason
// "gap"; with one it can, the frames after it. Then one ready, then
// events as they happen, and ": keepalive" comments every
// DefaultKeepAlive of quiet. A child whose reader fell so far behind that
// it can no longer resume it ends the stream; the Hub opens the feed again
// from its last cursor (and meets a gap). The feed never starts an agent.

// NotificationsPath is the endpoint of the notification feed.
const NotificationsPath = InternalPrefix + "notifications"

// The bounds of the notification feed.
const (
	// MaxNotificationCursorBytes bounds a cursor, in the request and in
	// every frame: the Hub stores the last one it read.
	MaxNotificationCursorBytes = 256
	// MaxNotificationFrameBytes bounds one frame's data as the Hub reads
	// it: a larger one breaks the connection (ErrEventTooLarge).
	MaxNotificationFrameBytes = 2 << 20
	// MaxNotificationIDBytes bounds a notification's id.
	MaxNotificationIDBytes = 512
)

// The event names (and frame types) of the notification feed.
const (
	NoticeEventSnapshot = "snapshot"
	NoticeEventEvent    = "event"
	NoticeEventReady    = "ready"
)

// The event types of an "event" frame.
const (
	noticeNotification = "notification"
	noticeResolved     = "resolved"
)

// The reasons of a snapshot.
const (
	NoticeReasonInitial = "initial"
	NoticeReasonGap     = "gap"
)

// ErrBadNotificationsRequest refuses a request whose cursor the feed does
// not take.
var ErrBadNotificationsRequest = errors.New("notification feed request with a cursor over the bound")

// NotificationsRequest is one request of the notification feed.
type NotificationsRequest struct {
	// Cursor resumes after the frame with this cursor; "" asks for a
	// snapshot.
	Cursor string
}

// URI is the path and query of the request, as the Hub sends it: the
// cursor only when set, escaped. It refuses a cursor no frame can carry
// (longer than MaxNotificationCursorBytes, or not printable ASCII): the
// Hub sends only cursors it read from frames.
func (r NotificationsRequest) URI() (string, error) {
	if !validCursor(r.Cursor, true) {
		return "", ErrBadNotificationsRequest
	}
	if r.Cursor == "" {
		return NotificationsPath, nil
	}
	return NotificationsPath + "?cursor=" + url.QueryEscape(r.Cursor), nil
}

// ParseNotificationsQuery reads the request from its query q (as
// url.URL.Query returns it): at most one "cursor", of at most
// MaxNotificationCursorBytes, and nothing else. A refusal matches
// ErrBadQuery and its message is the child's 400 answer. A cursor the
// child does not know is not refused here: it is a gap.
func ParseNotificationsQuery(q url.Values) (NotificationsRequest, error) {
	for name := range q {
		if name != "cursor" {
			return NotificationsRequest{}, queryError("the notification feed takes only cursor")
		}
	}
	cursors := q["cursor"]
	switch {
	case len(cursors) > 1:
		return NotificationsRequest{}, queryError("cursor given more than once")
	case len(cursors) == 1 && len(cursors[0]) > MaxNotificationCursorBytes:
		return NotificationsRequest{}, queryError(fmt.Sprintf("cursor over %d bytes", MaxNotificationCursorBytes))
	}
	var r NotificationsRequest
	if len(cursors) == 1 {
		r.Cursor = cursors[0]
	}
	return r, nil
}

// validCursor reports whether s can be a cursor of the feed: printable
// ASCII without spaces, at most MaxNotificationCursorBytes; empty only
// when empty is.
func validCursor(s string, empty bool) bool {
	if s == "" {
		return empty
	}
	if len(s) > MaxNotificationCursorBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// The wire forms. Pointers tell a field absent from one given empty, so
// the decoder can require each type's fields and refuse the others.
type (
	wireFrame struct {
		Type    string              `json:"type"`
		Cursor  *string             `json:"cursor,omitempty"`
		Reason  *string             `json:"reason,omitempty"`
		Pending *[]wireNotification `json:"pending,omitempty"`
		Event   *wireEvent          `json:"event,omitempty"`
	}
	wireEvent struct {
		Type           string            `json:"type"`
		Notification   *wireNotification `json:"notification,omitempty"`
		ID             *string           `json:"id,omitempty"`
		ConversationID *string           `json:"conversationId,omitempty"`
	}
	wireNotification struct {
		ID             *string `json:"id"`
		ConversationID *string `json:"conversationId"`
		SourceID       *string `json:"sourceId"`
		Kind           *string `json:"kind"`
		CreatedAt      *int64  `json:"createdAt"`
	}
)

// ErrBadNotificationFrame refuses a frame the feed cannot carry.
var ErrBadNotificationFrame = errors.New("notification frame the feed cannot carry")

// EncodeNotificationFrame is the event that carries fr, which
// DecodeNotificationFrame decodes back to fr (times to the millisecond,
// in UTC). It refuses (ErrBadNotificationFrame) what the decoder would.
func EncodeNotificationFrame(fr hub.NotificationFrame) (Event, error) {
	w := wireFrame{Cursor: &fr.Cursor}
	switch fr.Type {
	case hub.NoticeSnapshot:
		pending := make([]wireNotification, 0, len(fr.Pending))
		for _, n := range fr.Pending {
			pending = append(pending, toWire(n))
		}
		w.Type, w.Reason, w.Pending = NoticeEventSnapshot, &fr.Reason, &pending
	case hub.NoticeEvent:
		n := toWire(fr.Notification)
		w.Type, w.Event = NoticeEventEvent, &wireEvent{Type: noticeNotification, Notification: &n}
	case hub.NoticeResolved:
		w.Type, w.Event = NoticeEventEvent, &wireEvent{Type: noticeResolved, ID: &fr.Notification.ID,
			ConversationID: &fr.Notification.ConversationID}
	case hub.NoticeReady:
		w.Type = NoticeEventReady
	default:
		return Event{}, ErrBadNotificationFrame
	}
	data, err := json.Marshal(w)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Name: w.Type, Data: data}
	// The child encodes only what the Hub will take.
	if _, err := DecodeNotificationFrame(ev); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrBadNotificationFrame, err)
	}
	return ev, nil
}

func toWire(n hub.Notification) wireNotification {
	kind, ms := string(n.Kind), n.CreatedAt.UnixMilli()
	return wireNotification{ID: &n.ID, ConversationID: &n.ConversationID, SourceID: &n.SourceID, Kind: &kind, CreatedAt: &ms}
}

// DecodeNotificationFrame decodes one event of the notification feed,
// strictly: an event named by a frame type, carrying an id of nothing,
// whose data is exactly one JSON object of at most
// MaxNotificationFrameBytes of valid UTF-8, with every key spelt exactly
// and given once, its type the event's name, its cursor valid, and
// exactly the fields of its type (see the file's comment), each valid: a
// known kind and reason, ids within their bounds, an id that is the JSON
// array of the agent, the conversation, the kind and the source. Its
// errors never quote the event.
func DecodeNotificationFrame(ev Event) (hub.NotificationFrame, error) {
	switch {
	case ev.Name != NoticeEventSnapshot && ev.Name != NoticeEventEvent && ev.Name != NoticeEventReady:
		return hub.NotificationFrame{}, errors.New("notification feed: unknown event")
	case ev.ID != "":
		return hub.NotificationFrame{}, errors.New("notification feed: an event with an id")
	case len(ev.Data) > MaxNotificationFrameBytes:
		return hub.NotificationFrame{}, ErrEventTooLarge
	case !utf8.Valid(ev.Data):
		return hub.NotificationFrame{}, errors.New("notification feed: not UTF-8")
	}
	var w wireFrame
	if err := decodeStrict(ev.Data, &w); err != nil {
		return hub.NotificationFrame{}, fmt.Errorf("notification feed: %w", err)
	}
	if w.Type != ev.Name || w.Cursor == nil || !validCursor(*w.Cursor, false) {
		return hub.NotificationFrame{}, errors.New("notification feed: a frame without its type or cursor")
	}
	fr := hub.NotificationFrame{Cursor: *w.Cursor}
	switch {
	case w.Type == NoticeEventSnapshot && w.Event == nil && w.Reason != nil && w.Pending != nil:
		if *w.Reason != NoticeReasonInitial && *w.Reason != NoticeReasonGap {
			return hub.NotificationFrame{}, errors.New("notification feed: a snapshot of an unknown reason")
		}
		fr.Type, fr.Reason, fr.Pending = hub.NoticeSnapshot, *w.Reason, make([]hub.Notification, 0, len(*w.Pending))
		for _, wn := range *w.Pending {
			n, err := fromWire(&wn)
			if err != nil {
				return hub.NotificationFrame{}, err
			}
			fr.Pending = append(fr.Pending, n)
		}
	case w.Type == NoticeEventEvent && w.Reason == nil && w.Pending == nil && w.Event != nil:
		e := w.Event
		switch {
		case e.Type == noticeNotification && e.ID == nil && e.ConversationID == nil:
			n, err := fromWire(e.Notification)
			if err != nil {
				return hub.NotificationFrame{}, err
			}
			fr.Type, fr.Notification = hub.NoticeEvent, n
		case e.Type == noticeResolved && e.Notification == nil && e.ID != nil && e.ConversationID != nil:
			if !validID(*e.ID) || !validID(*e.ConversationID) {
				return hub.NotificationFrame{}, errors.New("notification feed: a resolution without its ids")
			}
			fr.Type, fr.Notification = hub.NoticeResolved, hub.Notification{ID: *e.ID, ConversationID: *e.ConversationID}
		default:
			return hub.NotificationFrame{}, errors.New("notification feed: an event of an unknown type or with another's fields")
		}
	case w.Type == NoticeEventReady && w.Reason == nil && w.Pending == nil && w.Event == nil:
		fr.Type = hub.NoticeReady
	default:
		return hub.NotificationFrame{}, errors.New("notification feed: a frame without its fields or with another's")
	}
	return fr, nil
}

// validID reports whether s can be a notification's or a conversation's
// id: not empty, at most MaxNotificationIDBytes.
func validID(s string) bool { return s != "" && len(s) <= MaxNotificationIDBytes }

// fromWire checks and maps one notification.
func fromWire(w *wireNotification) (hub.Notification, error) {
	bad := func(what string) (hub.Notification, error) {
		return hub.Notification{}, errors.New("notification feed: a notification " + what)
	}
	switch {
	case w == nil || w.ID == nil || w.ConversationID == nil || w.SourceID == nil || w.Kind == nil || w.CreatedAt == nil:
		return bad("without its fields")
	case hub.NotificationKind(*w.Kind).Category() == "":
		return bad("of an unknown kind")
	case !validID(*w.ID) || !validID(*w.ConversationID) || !validID(*w.SourceID):
		return bad("with an empty or too long id")
	case *w.CreatedAt <= 0:
		return bad("without its time")
	}
	var parts []string
	if json.Unmarshal([]byte(*w.ID), &parts) != nil || len(parts) != 4 || parts[0] == "" ||
		parts[1] != *w.ConversationID || parts[2] != *w.Kind || parts[3] != *w.SourceID {
		return bad("whose id is not its agent, conversation, kind and source")
	}
	return hub.Notification{ID: *w.ID, ConversationID: *w.ConversationID, SourceID: *w.SourceID,
		Kind: hub.NotificationKind(*w.Kind), CreatedAt: time.UnixMilli(*w.CreatedAt).UTC()}, nil
}

// decodeStrict decodes data, exactly one JSON object whose keys are
// exactly v's fields' names, each given once, into v.
func decodeStrict(data []byte, v any) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	if jsonkeys.Check(data, reflect.TypeOf(v), "frame") != nil {
		return errors.New("a key given twice, or not the frame's") // which, is not said: it is the child's text
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New("malformed frame")
	}
	if dec.InputOffset() != int64(len(bytes.TrimRight(data, " \t\r\n"))) {
		return errors.New("data after the frame")
	}
	return nil
}
