package docfeed

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// frameWriteTimeout bounds one write to the stream. A reader that stops
// reading without closing the connection is cut off after it rather than
// holding the handler forever; its subscription's queue meanwhile turns
// into one pending snapshot, so memory stays bounded either way.
const frameWriteTimeout = 30 * time.Second

// Handler serves the feed as Server-Sent Events: GET with the
// LiveDocumentKey in the query parameter "key" (absent or empty: the
// default context). Every frame is
//
//	event: state
//	data: <DocumentSnapshot or DocumentPatch JSON>
//
// the first a snapshot; a ": keepalive" comment follows every KeepAlive.
// The response has Content-Type text/event-stream and Cache-Control
// no-cache. A bad key answers 400 and a stopped feed 503, both with a JSON
// body {"error": "..."}; another method answers 405. The stream ends when
// the client goes away or the feed stops.
func (f *Feed) Handler() http.Handler { return http.HandlerFunc(f.serveEvents) }

func (f *Feed) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	keys := r.URL.Query()["key"]
	if len(keys) > 1 {
		writeError(w, http.StatusBadRequest, "key given more than once")
		return
	}
	key := ""
	if len(keys) == 1 {
		key = keys[0]
	}
	sub, err := f.Subscribe(r.Context(), key)
	switch {
	case errors.Is(err, ErrInvalidKey):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "document feed unavailable")
		return
	}
	defer sub.Close()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold frames back
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	flush := func() bool {
		// A writer that cannot flush (a middleware without Unwrap) still
		// streams, only later; only a failed flush ends the stream.
		err := rc.Flush()
		return err == nil || errors.Is(err, http.ErrNotSupported)
	}
	if !flush() {
		return
	}
	keepAlive := time.NewTicker(f.opts.KeepAlive)
	defer keepAlive.Stop()
	write := func(parts ...[]byte) bool {
		// Not every ResponseWriter supports deadlines; then writes are
		// bounded by the server's own timeouts alone.
		_ = rc.SetWriteDeadline(time.Now().Add(frameWriteTimeout))
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return false
			}
		}
		return true
	}
	for {
		wrote := false
		for {
			b, ok, err := sub.tryNext()
			if err != nil {
				return
			}
			if !ok {
				break
			}
			if !write(eventPrefix, b, eventSuffix) {
				return
			}
			wrote = true
		}
		if wrote && !flush() {
			return
		}
		select {
		case <-sub.wake:
		case <-keepAlive.C:
			if !write(keepAliveComment) || !flush() {
				return
			}
		case <-f.state.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

var (
	eventPrefix      = []byte("event: state\ndata: ")
	eventSuffix      = []byte("\n\n")
	keepAliveComment = []byte(": keepalive\n\n")
)

func writeError(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// An encoding error means the peer went away; there is no one to tell.
	_ = json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{msg})
}
