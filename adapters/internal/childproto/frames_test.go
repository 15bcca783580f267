package childproto_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// sameFrame compares frames, nil data as empty.
func sameFrame(a, b childproto.Frame) bool {
	return a.Kind == b.Kind && a.Cursor == b.Cursor && bytes.Equal(a.Data, b.Data)
}

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	data := func(s string) childproto.Frame { return childproto.Frame{Kind: childproto.FrameData, Data: []byte(s)} }
	for _, tc := range []struct {
		name  string
		feed  hub.Topic
		frame childproto.Frame
		event string // the event's name on the wire
	}{
		{"document snapshot", hub.TopicDocument, data(`{"kind":"snapshot"}`), "data"},
		{"document patch", hub.TopicDocument, data(`{"kind":"patch","upserts":[]}`), "data"},
		{"activity", hub.TopicActivity, data(`{"working":true,"awaiting":false}`), "data"},
		{"inventory", hub.TopicInventory, data(`{"type":"conversation.inventory"}`), "data"},
		{"conversation open", hub.TopicConversation, childproto.Frame{Kind: childproto.FrameOpen, Cursor: "h0"}, "open"},
		{"conversation open at an empty head", hub.TopicConversation, childproto.Frame{Kind: childproto.FrameOpen}, "open"},
		{"conversation event", hub.TopicConversation,
			childproto.Frame{Kind: childproto.FrameData, Cursor: "eyJ2IjoxfQ==", Data: []byte(`{"sequence":1}`)}, "data"},
		{"conversation resync", hub.TopicConversation,
			childproto.Frame{Kind: childproto.FrameResync, Data: []byte(`{"reason":"retention-gap"}`)}, "resync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ev, err := childproto.EncodeFrame(tc.feed, tc.frame)
			is.NoErr(err)               // encoded
			is.Equal(ev.Name, tc.event) // as the feed's event
			b, err := childproto.AppendEvent(nil, ev)
			is.NoErr(err) // framed
			r := childproto.NewEventReader(bytes.NewReader(b), childproto.MaxEventBytes)
			got, err := r.Next()
			is.NoErr(err) // read
			_, err = r.Next()
			is.True(errors.Is(err, io.EOF)) // alone
			fr, ok, err := childproto.DecodeFrame(tc.feed, got)
			is.NoErr(err)                    // decoded
			is.True(ok)                      // as a frame of the feed
			is.True(sameFrame(fr, tc.frame)) // the frame back
		})
	}
}

func TestEncodeFrameRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		feed  hub.Topic
		frame childproto.Frame
		want  error
	}{
		{"a topic no child serves", hub.TopicWorktrees, childproto.Frame{Kind: childproto.FrameData, Data: []byte("1")}, childproto.ErrUnknownFeed},
		{"no such topic", "weather", childproto.Frame{Kind: childproto.FrameData, Data: []byte("1")}, childproto.ErrUnknownFeed},
		{"open on documents", hub.TopicDocument, childproto.Frame{Kind: childproto.FrameOpen}, childproto.ErrBadFrame},
		{"a cursor on activity", hub.TopicActivity, childproto.Frame{Kind: childproto.FrameData, Cursor: "c", Data: []byte("1")}, childproto.ErrBadFrame},
		{"resync on inventory", hub.TopicInventory, childproto.Frame{Kind: childproto.FrameResync, Data: []byte("1")}, childproto.ErrBadFrame},
		{"a conversation event without a cursor", hub.TopicConversation, childproto.Frame{Kind: childproto.FrameData, Data: []byte("1")}, childproto.ErrBadFrame},
		{"open with data", hub.TopicConversation, childproto.Frame{Kind: childproto.FrameOpen, Data: []byte("1")}, childproto.ErrBadFrame},
		{"resync with a cursor", hub.TopicConversation, childproto.Frame{Kind: childproto.FrameResync, Cursor: "c", Data: []byte("1")}, childproto.ErrBadFrame},
		{"no kind", hub.TopicConversation, childproto.Frame{}, childproto.ErrBadFrame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := childproto.EncodeFrame(tc.feed, tc.frame)
			is.True(errors.Is(err, tc.want)) // refused
		})
	}
}

func TestDecodeFrame(t *testing.T) {
	t.Parallel()
	ev := func(name, id, data string) childproto.Event {
		return childproto.Event{Name: name, ID: id, Data: []byte(data)}
	}
	t.Run("events a feed does not define are skipped", func(t *testing.T) {
		is := is.New(t)
		for _, tc := range []struct {
			feed hub.Topic
			ev   childproto.Event
		}{
			{hub.TopicDocument, ev("activity", "", "{}")},
			{hub.TopicDocument, ev("", "", "{}")},
			{hub.TopicDocument, ev("open", "", `{"cursor":"c"}`)},
			{hub.TopicActivity, ev("resync", "", "{}")},
			{hub.TopicInventory, ev("future", "", "not even JSON")},
			{hub.TopicConversation, ev("chat", "c1", "{}")},
		} {
			_, ok, err := childproto.DecodeFrame(tc.feed, tc.ev)
			is.NoErr(err) // no failure
			is.True(!ok)  // but no frame
		}
	})
	t.Run("malformed events are refused", func(t *testing.T) {
		is := is.New(t)
		for _, tc := range []struct {
			feed hub.Topic
			ev   childproto.Event
		}{
			{hub.TopicDocument, ev("data", "", "{nope")},
			{hub.TopicDocument, ev("data", "nope", "{}")},
			{hub.TopicActivity, ev("data", "", "")},
			{hub.TopicConversation, ev("open", "", "{}")},
			{hub.TopicConversation, ev("open", "", "nope")},
			{hub.TopicConversation, ev("data", "", "{}")},
			{hub.TopicConversation, ev("data", "c1", "{nope")},
			{hub.TopicConversation, ev("resync", "", "nope")},
			{hub.TopicWorktrees, ev("data", "", "{}")},
		} {
			_, ok, err := childproto.DecodeFrame(tc.feed, tc.ev)
			is.True(err != nil)                                           // refused
			is.True(!ok)                                                  // with no frame
			is.True(!bytes.Contains([]byte(err.Error()), []byte("nope"))) // never quoting the stream
		}
	})
}
