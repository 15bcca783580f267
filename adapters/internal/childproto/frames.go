package childproto

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wharfhub/wharf/hub"
)

// The event names of the feeds: one for data on every feed, and two more
// on a feed that resumes (hub.TopicSpec.Resumes). What a data event
// carries is its topic's payload: a DocumentUpdate (package docfeed) on the
// document feed, an Activity, an InventoryTick, a conversation's ChatEvent.
const (
	EventData   = "data"   // every feed: its topic's payload; on a feed that resumes, its cursor in the id field
	EventOpen   = "open"   // a feed that resumes: an Open, first when opened without a cursor
	EventResync = "resync" // a feed that resumes: it cannot resume; it ends after this
)

// Activity is the data of the activity feed's frames: whether an agent
// of the session works (a turn or live background work) or awaits an
// answer (a permission request or a question), and the revision of the
// session's shells.
type Activity struct {
	Working  bool `json:"working"`
	Awaiting bool `json:"awaiting"`
	// Shells is the revision of the session's shells: it moves whenever
	// the list in Facts (a shell, a label, an attached flag) changes, and
	// a frame is sent at each move, so the Hub asks the facts again only
	// then. A frame without it (an older child) decodes as 0.
	Shells int64 `json:"shells"`
}

// InventoryTickType is the type of every InventoryTick.
const InventoryTickType = "conversation.inventory"

// InventoryTick is the data of the inventory feed's frames (the contract's
// ConversationInventoryEvent): a tick telling the Hub to list the
// conversations again.
type InventoryTick struct {
	Type string `json:"type"` // always InventoryTickType
	// Catalogs is the catalog revision of each agent; a client refreshes
	// an agent's catalog when its revision changes.
	Catalogs map[string]string `json:"catalogs,omitempty"`
}

// Open is the data of an EventOpen frame: the head cursor of a feed that
// resumes (a conversation's) when it was opened, so the Hub can resume
// after it.
type Open struct {
	Cursor string `json:"cursor"`
}

// DecodeActivity decodes an Activity; working and awaiting must be
// present, shells may be absent (0).
func DecodeActivity(data []byte) (Activity, error) {
	var a struct {
		Working  *bool `json:"working"`
		Awaiting *bool `json:"awaiting"`
		Shells   int64 `json:"shells"`
	}
	if decodeObject(data, &a) != nil || a.Working == nil || a.Awaiting == nil {
		return Activity{}, errors.New("activity without working and awaiting")
	}
	return Activity{Working: *a.Working, Awaiting: *a.Awaiting, Shells: a.Shells}, nil
}

// DecodeInventoryTick decodes an InventoryTick of type InventoryTickType.
func DecodeInventoryTick(data []byte) (InventoryTick, error) {
	var t InventoryTick
	if decodeObject(data, &t) != nil || t.Type != InventoryTickType {
		return InventoryTick{}, errors.New("inventory tick of another type")
	}
	return t, nil
}

// DecodeOpen decodes an Open; its cursor must be present (it may be
// empty: an empty conversation's head).
func DecodeOpen(data []byte) (Open, error) {
	var o struct {
		Cursor *string `json:"cursor"`
	}
	if decodeObject(data, &o) != nil || o.Cursor == nil {
		return Open{}, errors.New("conversation open event without a cursor")
	}
	return Open{Cursor: *o.Cursor}, nil
}

// FrameKind says what a Frame is.
type FrameKind int

// The kinds of frame.
const (
	FrameData   FrameKind = iota + 1 // a payload of the feed's topic
	FrameOpen                        // a resuming feed's head cursor, first
	FrameResync                      // a resuming feed cannot resume; the feed ends
)

// Frame is one frame of a feed, as the Hub relays it: what an Event means
// on its feed.
type Frame struct {
	Kind FrameKind
	// Cursor is, on a feed that resumes, an event's cursor (FrameData)
	// or the head (FrameOpen); "" otherwise.
	Cursor string
	// Data is the frame's JSON payload, relayed as it is; nil on FrameOpen.
	Data []byte
}

// DecodeFrame maps one event of topic t's feed to a frame. ok is false
// for an event the feed does not define (skipped, so the child may add
// events): any but EventData, and on a feed that resumes EventOpen and
// EventResync. A defined event that is malformed is an error, which never
// quotes the event: data that is not JSON (the Hub relays it to clients as
// it is), an open event without a cursor, a data event without an id on a
// feed that resumes or with one on any other. A FrameResync is the last
// frame: the feed ends after it.
func DecodeFrame(t hub.Topic, ev Event) (fr Frame, ok bool, err error) {
	s, known := feedSpec(t)
	switch {
	case !known:
		return Frame{}, false, ErrUnknownFeed
	case ev.Name == EventData && s.Resumes():
		if ev.ID == "" {
			return Frame{}, false, errors.New("data event without an id")
		}
		fr = Frame{Kind: FrameData, Cursor: ev.ID, Data: ev.Data}
	case ev.Name == EventData:
		if ev.ID != "" {
			return Frame{}, false, errors.New("data event with an id on a feed without cursors")
		}
		fr = Frame{Kind: FrameData, Data: ev.Data}
	case ev.Name == EventOpen && s.Resumes():
		o, err := DecodeOpen(ev.Data)
		if err != nil {
			return Frame{}, false, err
		}
		return Frame{Kind: FrameOpen, Cursor: o.Cursor}, true, nil
	case ev.Name == EventResync && s.Resumes():
		fr = Frame{Kind: FrameResync, Data: ev.Data}
	default:
		return Frame{}, false, nil
	}
	if !json.Valid(fr.Data) {
		return Frame{}, false, fmt.Errorf("%s event data is not JSON", ev.Name)
	}
	return fr, true, nil
}

// ErrBadFrame refuses a frame its feed cannot carry.
var ErrBadFrame = errors.New("frame its feed cannot carry")

// EncodeFrame is the event that carries fr on topic t's feed, which
// DecodeFrame maps back to fr. Data must be JSON; it is not checked here,
// since a document snapshot is megabytes straight from encoding/json. It
// refuses a topic no child serves (ErrUnknownFeed), and (ErrBadFrame) a
// data frame without a cursor on a feed that resumes or with one on any
// other, an open frame with data, a resync frame with a cursor, and either
// of those on a feed that does not resume.
func EncodeFrame(t hub.Topic, fr Frame) (Event, error) {
	s, ok := feedSpec(t)
	if !ok {
		return Event{}, ErrUnknownFeed
	}
	switch {
	case fr.Kind == FrameData && (fr.Cursor != "") == s.Resumes():
		return Event{Name: EventData, ID: fr.Cursor, Data: fr.Data}, nil
	case fr.Kind == FrameOpen && s.Resumes() && fr.Data == nil:
		data, err := json.Marshal(Open{Cursor: fr.Cursor})
		return Event{Name: EventOpen, Data: data}, err
	case fr.Kind == FrameResync && s.Resumes() && fr.Cursor == "":
		return Event{Name: EventResync, Data: fr.Data}, nil
	}
	return Event{}, ErrBadFrame
}
