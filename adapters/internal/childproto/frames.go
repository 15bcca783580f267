package childproto

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The event names of the feeds.
const (
	EventState     = "state"     // FeedDocument: a DocumentUpdate (package docfeed)
	EventActivity  = "activity"  // FeedActivity: an Activity
	EventInventory = "inventory" // FeedInventory: an InventoryTick
	EventOpen      = "open"      // FeedConversation: an Open, first when opened without a cursor
	EventChat      = "chat"      // FeedConversation: a ChatEvent, its cursor in the id field
	EventResync    = "resync"    // FeedConversation: the feed cannot resume; it ends after this
)

// Activity is the data of an EventActivity frame: whether an agent of the
// session works (a turn or live background work) or awaits an answer (a
// permission request or a question).
type Activity struct {
	Working  bool `json:"working"`
	Awaiting bool `json:"awaiting"`
}

// InventoryTickType is the type of every InventoryTick.
const InventoryTickType = "conversation.inventory"

// InventoryTick is the data of an EventInventory frame (the contract's
// ConversationInventoryEvent): a tick telling the Hub to list the
// conversations again.
type InventoryTick struct {
	Type string `json:"type"` // always InventoryTickType
	// Catalogs is the catalog revision of each agent; a client refreshes
	// an agent's catalog when its revision changes.
	Catalogs map[string]string `json:"catalogs,omitempty"`
}

// Open is the data of an EventOpen frame: the conversation's head cursor
// when the feed was opened, so the Hub can resume after it.
type Open struct {
	Cursor string `json:"cursor"`
}

// DecodeActivity decodes an Activity; both fields must be present.
func DecodeActivity(data []byte) (Activity, error) {
	var a struct {
		Working  *bool `json:"working"`
		Awaiting *bool `json:"awaiting"`
	}
	if decodeObject(data, &a) != nil || a.Working == nil || a.Awaiting == nil {
		return Activity{}, errors.New("activity without working and awaiting")
	}
	return Activity{Working: *a.Working, Awaiting: *a.Awaiting}, nil
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
	FrameOpen                        // a conversation's head cursor, first
	FrameResync                      // the conversation cannot resume; the feed ends
)

// Frame is one frame of a feed, as the Hub relays it: what an Event means
// on its feed.
type Frame struct {
	Kind FrameKind
	// Cursor is a conversation event's cursor (FrameData) or head
	// (FrameOpen); "" otherwise.
	Cursor string
	// Data is the frame's JSON payload, relayed as it is; nil on FrameOpen.
	Data []byte
}

// dataEvent names the one event of each feed but conversation; its data
// is the feed's frame.
var dataEvent = map[Feed]string{
	FeedDocument:  EventState,
	FeedActivity:  EventActivity,
	FeedInventory: EventInventory,
}

// DecodeFrame maps one event of feed f's stream to a frame. ok is false
// for an event the feed does not define (skipped, so the child may add
// events). A defined event that is malformed is an error, which never
// quotes the event: data that is not JSON (the Hub relays it to clients as
// it is), an open event without a cursor, a chat event without an id. A
// FrameResync is the last frame: the feed ends after it.
func DecodeFrame(f Feed, ev Event) (fr Frame, ok bool, err error) {
	switch {
	case f == FeedConversation:
		switch ev.Name {
		case EventOpen:
			o, err := DecodeOpen(ev.Data)
			if err != nil {
				return Frame{}, false, err
			}
			return Frame{Kind: FrameOpen, Cursor: o.Cursor}, true, nil
		case EventChat:
			if ev.ID == "" {
				return Frame{}, false, errors.New("chat event without an id")
			}
			fr = Frame{Kind: FrameData, Cursor: ev.ID, Data: ev.Data}
		case EventResync:
			fr = Frame{Kind: FrameResync, Data: ev.Data}
		default:
			return Frame{}, false, nil
		}
	case dataEvent[f] == "":
		return Frame{}, false, ErrUnknownFeed
	case ev.Name != dataEvent[f]:
		return Frame{}, false, nil
	default:
		fr = Frame{Kind: FrameData, Data: ev.Data}
	}
	if !json.Valid(fr.Data) {
		return Frame{}, false, fmt.Errorf("%s event data is not JSON", ev.Name)
	}
	return fr, true, nil
}

// ErrBadFrame refuses a frame its feed cannot carry.
var ErrBadFrame = errors.New("frame its feed cannot carry")

// EncodeFrame is the event that carries fr on feed f, which DecodeFrame
// maps back to fr. Data must be JSON; it is not checked here, since a
// document snapshot is megabytes straight from encoding/json. It refuses
// a kind the feed does not carry, a chat frame without a cursor and a
// cursor on any other frame but open.
func EncodeFrame(f Feed, fr Frame) (Event, error) {
	if f == FeedConversation {
		switch {
		case fr.Kind == FrameOpen && fr.Data == nil:
			data, err := json.Marshal(Open{Cursor: fr.Cursor})
			return Event{Name: EventOpen, Data: data}, err
		case fr.Kind == FrameData && fr.Cursor != "":
			return Event{Name: EventChat, ID: fr.Cursor, Data: fr.Data}, nil
		case fr.Kind == FrameResync && fr.Cursor == "":
			return Event{Name: EventResync, Data: fr.Data}, nil
		}
		return Event{}, ErrBadFrame
	}
	name := dataEvent[f]
	switch {
	case name == "":
		return Event{}, ErrUnknownFeed
	case fr.Kind != FrameData || fr.Cursor != "":
		return Event{}, ErrBadFrame
	}
	return Event{Name: name, Data: fr.Data}, nil
}
