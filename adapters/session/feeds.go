package session

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// The feed endpoints: the upstreams of the Hub's live stream, one topic
// each, all Server-Sent Events. They lie under /_wharf/, which the Hub never
// forwards, so only the Hub reaches them.
const (
	// DocumentFeedPath serves the document feed (package docfeed):
	// `event: state` frames for the watch context in the query parameter
	// "key", a canonical LiveDocumentKey.
	DocumentFeedPath = "/_wharf/feeds/document"
	// ActivityFeedPath serves `event: activity` frames, an Activity at
	// once and on every change.
	ActivityFeedPath = "/_wharf/feeds/activity"
	// InventoryFeedPath serves `event: inventory` frames, an
	// InventoryEvent at once (the opening tick) and on every change of the
	// conversations' inventory.
	InventoryFeedPath = "/_wharf/feeds/inventory"
	// ConversationFeedPath serves one conversation, named by the query
	// parameter "id", resuming after the optional "cursor".
	ConversationFeedPath = "/_wharf/feeds/conversation"
)

// DefaultKeepAlive is the interval of the ": keepalive" comments of every
// feed: a stream that stays quiet longer is known to be dead.
const DefaultKeepAlive = 15 * time.Second

// frameWriteTimeout bounds one write to a feed. A reader that stops
// reading without closing the connection is cut off after it rather than
// holding the handler forever.
const frameWriteTimeout = 30 * time.Second

// Activity is the data of an `event: activity` frame: whether an agent of
// the session works (a turn or live background work) or awaits an answer
// (a permission request or a question).
type Activity struct {
	Working  bool `json:"working"`
	Awaiting bool `json:"awaiting"`
}

// InventoryEvent is the data of an `event: inventory` frame (the
// contract's ConversationInventoryEvent): a tick telling the Hub to list
// the conversations again.
type InventoryEvent struct {
	Type string `json:"type"` // always "conversation.inventory"
}

// serveActivity sends the session's activity at once, then keeps the
// stream alive until the client or the child goes. No agent runs in this
// build, so the session never works nor awaits, and no change follows;
// the agents' work will feed changes into this loop.
func serveActivity(keepAlive time.Duration) http.HandlerFunc {
	first := mustJSON(Activity{})
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := openEventStream(w)
		if ok && s.send("activity", first) {
			s.idle(r.Context(), keepAlive)
		}
	}
}

// serveInventory sends the opening tick at once, then keeps the stream
// alive. The inventory of agents is honestly empty in this build, so no
// later tick follows.
func serveInventory(keepAlive time.Duration) http.HandlerFunc {
	first := mustJSON(InventoryEvent{Type: "conversation.inventory"})
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := openEventStream(w)
		if ok && s.send("inventory", first) {
			s.idle(r.Context(), keepAlive)
		}
	}
}

// serveConversation answers the feed of one conversation. No agent runs
// conversations in this build, so every id is unknown: 404.
func serveConversation(w http.ResponseWriter, r *http.Request) {
	if ids := r.URL.Query()["id"]; len(ids) != 1 || ids[0] == "" {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "one conversation id required"})
		return
	}
	writeJSON(w, http.StatusNotFound, errorBody{Error: "unknown conversation"})
}

// eventStream writes one text/event-stream response.
type eventStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// openEventStream sends the headers of a 200 event stream and flushes
// them, so the Hub knows at once that the feed is accepted. It reports
// false when the client is already gone.
func openEventStream(w http.ResponseWriter) (*eventStream, bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold frames back
	w.WriteHeader(http.StatusOK)
	s := &eventStream{w: w, rc: http.NewResponseController(w)}
	return s, s.write()
}

// send writes one event and flushes it. data must hold no line break
// (encoding/json output holds none), so it is one data line.
func (s *eventStream) send(event string, data []byte) bool {
	return s.write([]byte("event: "+event+"\ndata: "), data, []byte("\n\n"))
}

// idle writes a keepalive comment every interval until ctx ends (the
// client went away, or the child is stopping) or a write fails.
func (s *eventStream) idle(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !s.write(keepAliveComment) {
				return
			}
		}
	}
}

var keepAliveComment = []byte(": keepalive\n\n")

// write writes parts within frameWriteTimeout and flushes them.
func (s *eventStream) write(parts ...[]byte) bool {
	// Not every ResponseWriter supports deadlines (a recorder does not);
	// then writes are bounded by the server's own timeouts alone.
	_ = s.rc.SetWriteDeadline(time.Now().Add(frameWriteTimeout))
	for _, p := range parts {
		if _, err := s.w.Write(p); err != nil {
			return false
		}
	}
	// A writer that cannot flush still streams, only later; only a failed
	// flush ends the stream.
	err := s.rc.Flush()
	return err == nil || errors.Is(err, http.ErrNotSupported)
}

// mustJSON encodes a value that cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
