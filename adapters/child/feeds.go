package child

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/child/shells"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// The child's side of the activity, inventory and conversation feeds of
// childproto, fed by the conversation core (hub/chat); the document feed
// is documents.go and package docfeed. Without a core (tests of the
// protocol alone) the child honestly has no agent: activity never works
// nor awaits, the inventory is empty and every conversation is unknown.

// serveActivity sends the session's activity at once and on every change
// of the agents' activity or of the shells' revision.
func serveActivity(m *chat.Manager, reg *shells.Registry, keepAlive time.Duration) feed {
	return func(w http.ResponseWriter, r *http.Request, _ childproto.FeedRequest) {
		if m == nil && reg == nil {
			serveOpening(w, r, mustFrame(hub.TopicActivity, childproto.Activity{}), keepAlive)
			return
		}
		follow(w, r, keepAlive, func() (childproto.Event, <-chan struct{}) {
			var act childproto.Activity
			var agents, shellsMoved <-chan struct{}
			if m != nil {
				a, wait := m.Activity()
				act.Working, act.Awaiting, agents = a.Working, a.Awaiting, wait
			}
			if reg != nil {
				act.Shells, shellsMoved = reg.Revision()
			}
			return mustFrame(hub.TopicActivity, act), either(r.Context(), agents, shellsMoved)
		})
	}
}

// either returns a channel closed once a or b is closed (a nil one never
// is), or when ctx ends; its goroutine ends then too.
func either(ctx context.Context, a, b <-chan struct{}) <-chan struct{} {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := make(chan struct{})
	go func() {
		defer close(out)
		select {
		case <-a:
		case <-b:
		case <-ctx.Done():
		}
	}()
	return out
}

// serveInventory sends the opening tick at once, then one tick (with the
// agents' catalog revisions) whenever the inventory changed; changes that
// come while a tick is written collapse into the next.
func serveInventory(m *chat.Manager, keepAlive time.Duration) feed {
	return func(w http.ResponseWriter, r *http.Request, _ childproto.FeedRequest) {
		if m == nil {
			serveOpening(w, r, mustFrame(hub.TopicInventory, childproto.InventoryTick{Type: childproto.InventoryTickType}), keepAlive)
			return
		}
		follow(w, r, keepAlive, func() (childproto.Event, <-chan struct{}) {
			catalogs, wait := m.Inventory()
			return mustFrame(hub.TopicInventory, childproto.InventoryTick{Type: childproto.InventoryTickType, Catalogs: catalogs}), wait
		})
	}
}

// follow writes next's event at once and again each time the channel it
// returned closes, until the client or the child goes.
func follow(w http.ResponseWriter, r *http.Request, keepAlive time.Duration, next func() (childproto.Event, <-chan struct{})) {
	s, err := childproto.OpenStream(w)
	if err != nil {
		return
	}
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		ev, wait := next()
		if s.Send(ev) != nil {
			return
		}
		for waiting := true; waiting; {
			select {
			case <-r.Context().Done():
				return
			case <-wait:
				waiting = false
			case <-t.C:
				if s.KeepAlive() != nil || s.Flush() != nil {
					return
				}
			}
		}
	}
}

// serveConversation answers the feed of one conversation (the request's
// key): `open` with the head when opened without a cursor, then every
// event after the cursor as data frames (the cursor in the id field), or
// one `resync` after which the feed ends: the core's, for a cursor it
// cannot resume, or conversation-closed, when the conversation is closed
// while followed. An unknown conversation answers 404.
func serveConversation(m *chat.Manager, keepAlive time.Duration) feed {
	return func(w http.ResponseWriter, r *http.Request, req childproto.FeedRequest) {
		if m == nil {
			childproto.WriteError(w, http.StatusNotFound, "unknown conversation")
			return
		}
		cursor := req.Cursor
		opening := cursor == ""
		if opening {
			var err error
			if cursor, err = m.Head(req.Key); err != nil {
				childproto.WriteError(w, http.StatusNotFound, "unknown conversation")
				return
			}
		} else if _, err := m.Events(req.Key, cursor); hub.KindOf(err) == hub.NotFound {
			childproto.WriteError(w, http.StatusNotFound, "unknown conversation")
			return
		}
		s, err := childproto.OpenStream(w)
		if err != nil {
			return
		}
		if opening && send(s, childproto.Frame{Kind: childproto.FrameOpen, Cursor: cursor}) != nil {
			return
		}
		streamConversation(r.Context(), s, m, req.Key, cursor, keepAlive)
	}
}

// streamConversation writes the events after cursor as they come.
func streamConversation(ctx context.Context, s *childproto.StreamWriter, m *chat.Manager, id, cursor string, keepAlive time.Duration) {
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		b, err := m.Events(id, cursor)
		if err != nil {
			// Closed meanwhile (the conversation is no longer known): the
			// Hub tells every subscriber once and does not retry.
			if hub.KindOf(err) == hub.NotFound {
				_ = send(s, childproto.Frame{Kind: childproto.FrameResync, Data: closedEvent(id, cursor)})
			}
			return
		}
		if b.Resync != nil {
			_ = send(s, childproto.Frame{Kind: childproto.FrameResync, Data: b.Resync})
			return
		}
		for _, f := range b.Frames {
			ev, err := childproto.EncodeFrame(hub.TopicConversation, childproto.Frame{Kind: childproto.FrameData, Cursor: f.Cursor, Data: f.Data})
			if err != nil || s.Write(ev) != nil {
				return
			}
			cursor = f.Cursor
		}
		if len(b.Frames) > 0 && s.Flush() != nil {
			return
		}
		if b.Ended || !await(ctx, s, b.Wait, t) {
			return
		}
	}
}

// await waits until wait is closed, writing a keepalive at every tick of
// t; false once the request ended or a keepalive could not be written.
func await(ctx context.Context, s *childproto.StreamWriter, wait <-chan struct{}, t *time.Ticker) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-wait:
			return true
		case <-t.C:
			if s.KeepAlive() != nil || s.Flush() != nil {
				return false
			}
		}
	}
}

// closedEvent is the ChatResyncEvent of the conversation id closed while
// its feed was at cursor: reason conversation-closed, with the head the
// feed had sent.
func closedEvent(id, cursor string) []byte {
	head, _ := chat.ParseCursor(cursor) // a cursor the core made; zero otherwise
	data, err := json.Marshal(chat.Event{Generation: head.Generation, Sequence: head.Sequence, ConversationID: id,
		Type: chat.EventResync, Reason: hub.ResyncConversationClosed})
	if err != nil {
		panic("session: a resync event does not encode: " + err.Error()) // plain values always do
	}
	return data
}

// send writes one conversation frame and flushes it.
func send(s *childproto.StreamWriter, fr childproto.Frame) error {
	ev, err := childproto.EncodeFrame(hub.TopicConversation, fr)
	if err != nil {
		return err
	}
	return s.Send(ev)
}

// serveOpening opens the stream, sends first, then writes a keepalive
// comment every interval until the request's context ends (the client went
// away, or the child is stopping) or a write fails.
func serveOpening(w http.ResponseWriter, r *http.Request, first childproto.Event, every time.Duration) {
	s, err := childproto.OpenStream(w)
	if err != nil || s.Send(first) != nil {
		return
	}
	idle(r.Context(), s, every)
}

// idle writes a keepalive comment every interval until ctx ends or a
// write fails.
func idle(ctx context.Context, s *childproto.StreamWriter, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.KeepAlive() != nil || s.Flush() != nil {
				return
			}
		}
	}
}

// mustFrame is the event of a data frame of topic t's feed carrying v, a
// value that cannot fail to encode.
func mustFrame(t hub.Topic, v any) childproto.Event {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	ev, err := childproto.EncodeFrame(t, childproto.Frame{Kind: childproto.FrameData, Data: data})
	if err != nil {
		panic(err)
	}
	return ev
}
