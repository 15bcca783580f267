package childproto_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// FuzzFeedStream feeds arbitrary bytes to the Hub's decoder of a feed's
// stream, for every feed of the topic table: it must never panic nor read past its bound,
// and whatever it accepts must survive the child's encoder and be decoded
// again to the same event and frame.
func FuzzFeedStream(f *testing.F) {
	for _, seed := range []string{
		"event: data\ndata: {\"kind\":\"snapshot\"}\n\n: keepalive\n\n",
		"event: open\ndata: {\"cursor\":\"h0\"}\n\nid: c1\nevent: data\ndata: {}\n\nevent: resync\ndata: {}\n\n",
		"event: data\r\ndata: {\"working\":false,\r\ndata: \"awaiting\":true}\r\n\r\n",
		"event: data\ndata: {\"type\":\"conversation.inventory\"}\n\nid: a\x00\ndata: 1\n",
	} {
		f.Add([]byte(seed))
	}
	const bound = 1 << 12
	var feeds []hub.Topic
	for _, s := range hub.Topics() {
		if s.Feed {
			feeds = append(feeds, s.Name)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := childproto.NewEventReader(bytes.NewReader(body), bound)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			if len(ev.Data) > bound {
				t.Fatalf("event of %d bytes read past the bound %d", len(ev.Data), bound)
			}
			if b, err := childproto.AppendEvent(nil, ev); err == nil {
				again := readOne(t, b)
				if again.Name != ev.Name || again.ID != ev.ID || !bytes.Equal(again.Data, ev.Data) {
					t.Fatalf("event %q reads back as %q", ev, again)
				}
			}
			for _, feed := range feeds {
				fr, ok, err := childproto.DecodeFrame(feed, ev)
				if err != nil || !ok {
					continue
				}
				enc, err := childproto.EncodeFrame(feed, fr)
				if err != nil {
					t.Fatalf("frame %+v of %s decoded but cannot be encoded: %v", fr, feed, err)
				}
				b, err := childproto.AppendEvent(nil, enc)
				if errors.Is(err, childproto.ErrBadEvent) {
					continue // a CR in data or id: read, but never written by a child
				}
				back, ok, err := childproto.DecodeFrame(feed, readOne(t, b))
				if err != nil || !ok || back.Kind != fr.Kind || back.Cursor != fr.Cursor || !bytes.Equal(back.Data, fr.Data) {
					t.Fatalf("frame %+v of %s decodes back as %+v (%v, %v)", fr, feed, back, ok, err)
				}
			}
		}
	})
}

// readOne reads the one event of a frame AppendEvent wrote.
func readOne(t *testing.T, b []byte) childproto.Event {
	t.Helper()
	ev, err := childproto.NewEventReader(bytes.NewReader(b), len(b)).Next()
	if err != nil {
		t.Fatalf("frame %q does not read back: %v", b, err)
	}
	return ev
}

// FuzzNotificationStream feeds arbitrary bytes to the Hub's decoder of
// the notification feed: it must never panic nor read past its bound, and
// every frame it accepts must survive the child's encoder and decode again
// to the same frame.
func FuzzNotificationStream(f *testing.F) {
	for _, seed := range []string{
		"event: snapshot\ndata: {\"type\":\"snapshot\",\"cursor\":\"e:0\",\"reason\":\"initial\",\"pending\":[]}\n\nevent: ready\ndata: {\"type\":\"ready\",\"cursor\":\"e:0\"}\n\n",
		"event: event\ndata: {\"type\":\"event\",\"cursor\":\"e:1\",\"event\":{\"type\":\"notification\",\"notification\":" +
			"{\"id\":\"[\\\"a\\\",\\\"a:s\\\",\\\"turn-completed\\\",\\\"t\\\"]\",\"conversationId\":\"a:s\",\"sourceId\":\"t\",\"kind\":\"turn-completed\",\"createdAt\":5}}}\n\n",
		"event: event\ndata: {\"type\":\"event\",\"cursor\":\"e:2\",\"event\":{\"type\":\"resolved\",\"id\":\"x\",\"conversationId\":\"a:s\"}}\n\n: keepalive\n\n",
		"event: snapshot\ndata: {\"type\":\"snapshot\",\"cursor\":\"e:3\",\"reason\":\"gap\",\"pending\":[{\"id\":\"[\\\"a\\\",\\\"a:s\\\",\\\"question-pending\\\",\\\"q\\\"]\"," +
			"\"conversationId\":\"a:s\",\"sourceId\":\"q\",\"kind\":\"question-pending\",\"createdAt\":9}]}\n\n",
	} {
		f.Add([]byte(seed))
	}
	const bound = 1 << 12
	f.Fuzz(func(t *testing.T, body []byte) {
		r := childproto.NewEventReader(bytes.NewReader(body), bound)
		for {
			ev, err := r.Next()
			if err != nil {
				return
			}
			fr, err := childproto.DecodeNotificationFrame(ev)
			if err != nil {
				continue
			}
			enc, err := childproto.EncodeNotificationFrame(fr)
			if err != nil {
				t.Fatalf("frame %+v decoded but cannot be encoded: %v", fr, err)
			}
			b, err := childproto.AppendEvent(nil, enc)
			if err != nil {
				t.Fatalf("frame %+v encodes as an event that cannot be framed: %v", fr, err)
			}
			back, err := childproto.DecodeNotificationFrame(readOne(t, b))
			if err != nil || !reflect.DeepEqual(back, fr) {
				t.Fatalf("frame %+v decodes back as %+v (%v)", fr, back, err)
			}
		}
	})
}
