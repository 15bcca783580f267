package childproto_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
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
		feed  childproto.Feed
		frame childproto.Frame
		event string // the event's name on the wire
	}{
		{"document snapshot", childproto.FeedDocument, data(`{"kind":"snapshot"}`), "state"},
		{"document patch", childproto.FeedDocument, data(`{"kind":"patch","upserts":[]}`), "state"},
		{"activity", childproto.FeedActivity, data(`{"working":true,"awaiting":false}`), "activity"},
		{"inventory", childproto.FeedInventory, data(`{"type":"conversation.inventory"}`), "inventory"},
		{"conversation open", childproto.FeedConversation, childproto.Frame{Kind: childproto.FrameOpen, Cursor: "h0"}, "open"},
		{"conversation open at an empty head", childproto.FeedConversation, childproto.Frame{Kind: childproto.FrameOpen}, "open"},
		{"conversation chat", childproto.FeedConversation,
			childproto.Frame{Kind: childproto.FrameData, Cursor: "eyJ2IjoxfQ==", Data: []byte(`{"sequence":1}`)}, "chat"},
		{"conversation resync", childproto.FeedConversation,
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
		feed  childproto.Feed
		frame childproto.Frame
		want  error
	}{
		{"an unknown feed", "worktrees", childproto.Frame{Kind: childproto.FrameData, Data: []byte("1")}, childproto.ErrUnknownFeed},
		{"open on documents", childproto.FeedDocument, childproto.Frame{Kind: childproto.FrameOpen}, childproto.ErrBadFrame},
		{"a cursor on activity", childproto.FeedActivity, childproto.Frame{Kind: childproto.FrameData, Cursor: "c", Data: []byte("1")}, childproto.ErrBadFrame},
		{"resync on inventory", childproto.FeedInventory, childproto.Frame{Kind: childproto.FrameResync, Data: []byte("1")}, childproto.ErrBadFrame},
		{"chat without a cursor", childproto.FeedConversation, childproto.Frame{Kind: childproto.FrameData, Data: []byte("1")}, childproto.ErrBadFrame},
		{"open with data", childproto.FeedConversation, childproto.Frame{Kind: childproto.FrameOpen, Data: []byte("1")}, childproto.ErrBadFrame},
		{"resync with a cursor", childproto.FeedConversation, childproto.Frame{Kind: childproto.FrameResync, Cursor: "c", Data: []byte("1")}, childproto.ErrBadFrame},
		{"no kind", childproto.FeedConversation, childproto.Frame{}, childproto.ErrBadFrame},
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
			feed childproto.Feed
			ev   childproto.Event
		}{
			{childproto.FeedDocument, ev("activity", "", "{}")},
			{childproto.FeedDocument, ev("", "", "{}")},
			{childproto.FeedActivity, ev("state", "", "{}")},
			{childproto.FeedInventory, ev("future", "", "not even JSON")},
			{childproto.FeedConversation, ev("state", "", "{}")},
		} {
			_, ok, err := childproto.DecodeFrame(tc.feed, tc.ev)
			is.NoErr(err) // no failure
			is.True(!ok)  // but no frame
		}
	})
	t.Run("malformed events are refused", func(t *testing.T) {
		is := is.New(t)
		for _, tc := range []struct {
			feed childproto.Feed
			ev   childproto.Event
		}{
			{childproto.FeedDocument, ev("state", "", "{nope")},
			{childproto.FeedActivity, ev("activity", "", "")},
			{childproto.FeedConversation, ev("open", "", "{}")},
			{childproto.FeedConversation, ev("open", "", "nope")},
			{childproto.FeedConversation, ev("chat", "", "{}")},
			{childproto.FeedConversation, ev("chat", "c1", "{nope")},
			{childproto.FeedConversation, ev("resync", "", "nope")},
			{"worktrees", ev("state", "", "{}")},
		} {
			_, ok, err := childproto.DecodeFrame(tc.feed, tc.ev)
			is.True(err != nil)                                           // refused
			is.True(!ok)                                                  // with no frame
			is.True(!bytes.Contains([]byte(err.Error()), []byte("nope"))) // never quoting the stream
		}
	})
}
