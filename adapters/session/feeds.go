package session

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// The child's side of the activity, inventory and conversation feeds of
// childproto; the document feed is documents.go and package docfeed.

// serveActivity sends the session's activity at once, then keeps the
// stream alive until the client or the child goes. No agent runs in this
// build, so the session never works nor awaits, and no change follows;
// the agents' work will feed changes into this loop.
func serveActivity(keepAlive time.Duration) http.HandlerFunc {
	first := mustFrame(childproto.FeedActivity, childproto.Activity{})
	return func(w http.ResponseWriter, r *http.Request) {
		serveOpening(w, r, first, keepAlive)
	}
}

// serveInventory sends the opening tick at once, then keeps the stream
// alive. The inventory of agents is honestly empty in this build, so no
// later tick follows.
func serveInventory(keepAlive time.Duration) http.HandlerFunc {
	first := mustFrame(childproto.FeedInventory, childproto.InventoryTick{Type: childproto.InventoryTickType})
	return func(w http.ResponseWriter, r *http.Request) {
		serveOpening(w, r, first, keepAlive)
	}
}

// serveConversation answers the feed of one conversation. No agent runs
// conversations in this build, so every id is unknown: 404.
func serveConversation(w http.ResponseWriter, r *http.Request) {
	if _, err := childproto.ParseFeedQuery(childproto.FeedConversation, r.URL.Query()); err != nil {
		childproto.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	childproto.WriteError(w, http.StatusNotFound, "unknown conversation")
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

// mustFrame is the event of a data frame of feed f carrying v, a value
// that cannot fail to encode.
func mustFrame(f childproto.Feed, v any) childproto.Event {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	ev, err := childproto.EncodeFrame(f, childproto.Frame{Kind: childproto.FrameData, Data: data})
	if err != nil {
		panic(err)
	}
	return ev
}
