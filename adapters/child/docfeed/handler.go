package docfeed

import (
	"errors"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// Handler serves the feed as Server-Sent Events, the document feed of the
// Hub<->child protocol (adapters/internal/childproto): GET with the
// LiveDocumentKey in the query parameter "key" (absent or empty: the
// default context). Every frame is
//
//	event: data
//	data: <DocumentSnapshot or DocumentPatch JSON>
//
// the first a snapshot; a ": keepalive" comment follows every KeepAlive.
// The response has Content-Type text/event-stream and Cache-Control
// no-cache. A bad key, or a parameter but key, answers 400 and a stopped
// feed 503, both with a JSON body {"error": "..."}; another method answers
// 405. The stream ends when the client goes away or the feed stops. A reader that stops reading
// without closing the connection is cut off after childproto.WriteTimeout;
// its subscription's queue meanwhile turns into one pending snapshot, so
// memory stays bounded either way.
func (f *Feed) Handler() http.Handler { return http.HandlerFunc(f.serveEvents) }

func (f *Feed) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		childproto.WriteError(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	req, err := childproto.ParseFeedQuery(hub.TopicDocument, r.URL.Query())
	if err != nil {
		childproto.WriteError(w, http.StatusBadRequest, err.Error())
		return
	}
	sub, err := f.Subscribe(r.Context(), req.Key)
	switch {
	case errors.Is(err, ErrInvalidKey):
		childproto.WriteError(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		childproto.WriteError(w, http.StatusServiceUnavailable, "document feed unavailable")
		return
	}
	defer sub.Close()

	s, err := childproto.OpenStream(w)
	if err != nil {
		return
	}
	keepAlive := time.NewTicker(f.opts.KeepAlive)
	defer keepAlive.Stop()
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
			ev, err := childproto.EncodeFrame(hub.TopicDocument, childproto.Frame{Kind: childproto.FrameData, Data: b})
			if err != nil || s.Write(ev) != nil {
				return
			}
			wrote = true
		}
		if wrote && s.Flush() != nil {
			return
		}
		select {
		case <-sub.wake:
		case <-keepAlive.C:
			if s.KeepAlive() != nil || s.Flush() != nil {
				return
			}
		case <-f.state.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}
