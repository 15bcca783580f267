package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/adapters/internal/jsonkeys"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// Frames are written piece by piece, at most livePiece bytes at a time,
// each under a write deadline at least liveWriteTimeout/2 away, and each
// piece written is reported to the core as progress (live.Stream.Progress):
// a client that reads a big frame at any pace above one piece per 15 s is
// served, and one that stops reading is cut off by the deadline (or ended
// by the core once frames pile up behind it, live.StallTimeout). Data
// is written from the envelope itself, never copied into a buffer: ten
// streams of a 16 MiB answer share its one copy.
const (
	liveWriteTimeout = 30 * time.Second
	livePiece        = 64 << 10
)

// handleLive opens the caller's live stream (hubStreamLive). Every check
// happens before the first byte; after it, failures end the stream, which
// the client answers by reconnecting with its cursors.
func (a *api) handleLive(w http.ResponseWriter, r *http.Request, c caller) error {
	if c.viaCookie && !a.sameOrigin(r) {
		return hub.Errorf(hub.Forbidden, "cross-origin request rejected")
	}
	q := r.URL.Query()
	for _, name := range []string{"ws", "activity", "subs", "reconnect"} {
		if len(q[name]) > 1 {
			return hub.Errorf(hub.Invalid, "%s must be given at most once", name)
		}
	}
	ws, present := q.Get("ws"), q.Has("ws")
	if err := hub.CheckLiveWorkspaceID(ws, present); err != nil {
		return err
	}
	for _, name := range []string{"activity", "reconnect"} {
		if v := q.Get(name); q.Has(name) && v != "0" && v != "1" {
			return hub.Errorf(hub.Invalid, "%s must be 0 or 1", name)
		}
	}
	var subs []hub.Subscription
	if raw := q.Get("subs"); q.Has("subs") {
		var err error
		if subs, err = a.parseSubs(raw); err != nil {
			return err
		}
	}
	s, err := a.live.OpenLive(r.Context(), c.DeviceSession, ws, q.Get("activity") == "1", subs)
	if err != nil {
		return err
	}
	defer s.Close()
	if q.Get("reconnect") == "1" {
		a.log.LogAttrs(r.Context(), slog.LevelDebug, "live stream reopened after a transport error")
	}

	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store, no-transform")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold frames back
	w.WriteHeader(http.StatusOK)
	out := &liveWriter{w: w, rc: http.NewResponseController(w), s: s}
	// A stream the Hub ends (its client stalled, its session ended) must
	// not keep a write blocked until the deadline: cut it short. A
	// callback, not a goroutine per stream; the lock keeps it from
	// touching the response once the handler has returned.
	var cut sync.Mutex
	returned := false
	context.AfterFunc(s.Context(), func() {
		cut.Lock()
		defer cut.Unlock()
		if !returned {
			_ = out.rc.SetWriteDeadline(time.Now())
		}
	})
	defer func() {
		cut.Lock()
		returned = true
		cut.Unlock()
	}()
	buf := bytes.NewBufferString(": open\n\nevent: hello\ndata: ")
	hello, _ := json.Marshal(struct {
		StreamID string `json:"streamId"`
	}{s.ID()})
	buf.Write(hello)
	buf.WriteString("\n\n")
	if err := out.flush(buf); err != nil {
		return nil // the client went away
	}
	for {
		err := s.Next(r.Context(), func(envs []live.Envelope, keepalive bool) error {
			if keepalive {
				buf.WriteString(": keepalive\n\n")
			}
			for _, e := range envs {
				buf.WriteString("event: live\ndata: ")
				if err := out.envelope(buf, e); err != nil {
					return err
				}
				buf.WriteString("\n\n")
			}
			return out.flush(buf)
		})
		if err != nil {
			// Any end is the stream's end; the status line is long gone,
			// so there is nobody to tell but the log.
			if !errors.Is(err, live.ErrEnded) && r.Context().Err() == nil {
				a.log.LogAttrs(r.Context(), slog.LevelDebug, "live stream ended", slog.String("why", err.Error()))
			}
			return nil
		}
	}
}

// liveWriter writes a stream's frames under a write deadline.
type liveWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	s        *live.Stream
	deadline time.Time
}

// envelope appends e to buf as LiveEnvelope JSON. Data is already encoded
// (and compact, one line) JSON shared by many streams, so it is spliced in
// rather than re-encoded; a large one is written from where it lies, after
// what buf holds, rather than copied into buf.
func (o *liveWriter) envelope(buf *bytes.Buffer, e live.Envelope) error {
	appendEnvelopeHead(buf, e)
	if e.Data != nil {
		buf.WriteString(`,"data":`)
		if len(e.Data) < livePiece {
			buf.Write(e.Data)
		} else {
			if err := o.write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
			if err := o.write(e.Data); err != nil {
				return err
			}
		}
	}
	buf.WriteString("}}")
	if buf.Len() >= livePiece {
		if err := o.write(buf.Bytes()); err != nil {
			return err
		}
		buf.Reset()
	}
	return nil
}

// write writes p piece by piece (see livePiece), reporting each piece to
// the core as progress.
func (o *liveWriter) write(p []byte) error {
	for len(p) > 0 {
		n := min(len(p), livePiece)
		if err := o.writePiece(p[:n]); err != nil {
			return err
		}
		o.s.Progress()
		p = p[n:]
	}
	return nil
}

// writePiece writes p within the write deadline. The deadline is moved
// only once half of it is used up: setting it costs a timer update per
// write, which a busy stream would pay per piece.
func (o *liveWriter) writePiece(p []byte) error {
	if now := time.Now(); o.deadline.Sub(now) < liveWriteTimeout/2 {
		o.deadline = now.Add(liveWriteTimeout)
		_ = o.rc.SetWriteDeadline(o.deadline)
	}
	// After the deadline is set, so the watcher's cut cannot be undone.
	select {
	case <-o.s.Done():
		return live.ErrEnded
	default:
	}
	_, err := o.w.Write(p)
	return err
}

// flush writes what buf holds and flushes the response, then empties buf
// for reuse.
func (o *liveWriter) flush(buf *bytes.Buffer) error {
	err := o.write(buf.Bytes())
	if err == nil {
		err = o.rc.Flush()
	}
	buf.Reset()
	return err
}

// appendEnvelopeHead writes e as LiveEnvelope JSON up to its data.
func appendEnvelopeHead(buf *bytes.Buffer, e live.Envelope) {
	buf.WriteString(`{"ws":`)
	appendString(buf, e.WS)
	buf.WriteString(`,"topic":`)
	appendString(buf, string(e.Topic))
	if e.Keyed {
		buf.WriteString(`,"key":`)
		appendString(buf, e.Key)
	}
	buf.WriteString(`,"cursor":`)
	appendString(buf, e.Cursor)
	buf.WriteString(`,"event":{"kind":`)
	appendString(buf, string(e.Kind))
}

// appendString writes s as a JSON string. Ids, topics and cursors are
// almost always plain ASCII that needs no escaping, written as is; the
// rest goes through the encoder.
func appendString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always encodes
			buf.Write(b)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

// parseSubs decodes the `subs` query parameter.
func (a *api) parseSubs(raw string) ([]hub.Subscription, error) {
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, hub.Errorf(hub.Invalid, "subs must be a JSON array")
	}
	var entries []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &entries); err != nil || entries == nil {
		return nil, hub.Errorf(hub.Invalid, "expected an array of subscriptions")
	}
	return a.decodeSubs(entries, true)
}

// decodeSubs decodes subscription entries; withCursor says whether a
// cursor may be given (not in a removal).
func (a *api) decodeSubs(entries []json.RawMessage, withCursor bool) ([]hub.Subscription, error) {
	if len(entries) > hub.MaxLiveSubscriptions {
		return nil, hub.Errorf(hub.Invalid, "too many subscriptions")
	}
	subs := make([]hub.Subscription, 0, len(entries))
	for _, raw := range entries {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil || fields == nil {
			return nil, hub.Errorf(hub.Invalid, "subscription must be an object")
		}
		if err := jsonkeys.Check(raw, nil, "subscription"); err != nil {
			return nil, hub.Errorf(hub.Invalid, "%s", err)
		}
		for name := range fields {
			if name != "topic" && name != "key" && (name != "cursor" || !withCursor) {
				return nil, hub.Errorf(hub.Invalid, "subscription contains an unknown field: %s", strconv.Quote(name))
			}
		}
		var sub hub.Subscription
		var topic string
		if json.Unmarshal(fields["topic"], &topic) != nil {
			return nil, hub.SubscriptionTopicError()
		}
		sub.Topic = hub.Topic(topic)
		if k, ok := fields["key"]; ok && string(k) != "null" {
			if json.Unmarshal(k, &sub.Key) != nil {
				return nil, hub.Errorf(hub.Invalid, "subscription key must be a string")
			}
			sub.Keyed = true
		}
		if c, ok := fields["cursor"]; ok && string(c) != "null" {
			if json.Unmarshal(c, &sub.Cursor) != nil {
				return nil, hub.Errorf(hub.Invalid, "subscription cursor must be a string")
			}
		}
		if err := a.live.CheckSubscription(sub); err != nil {
			return nil, err
		}
		subs = append(subs, sub)
	}
	return subs, nil
}

// handleLiveSubscriptions changes a stream's subscriptions
// (hubUpdateLiveSubscriptions).
func (a *api) handleLiveSubscriptions(w http.ResponseWriter, r *http.Request, c caller) error {
	var body struct {
		Add    []json.RawMessage `json:"add"`
		Remove []json.RawMessage `json:"remove"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &body); err != nil {
		return err
	}
	add, err := a.decodeSubs(body.Add, true)
	if err != nil {
		return err
	}
	rem, err := a.decodeSubs(body.Remove, false)
	if err != nil {
		return err
	}
	change := hub.SubscriptionChange{Add: add}
	for _, s := range rem {
		change.Remove = append(change.Remove, s.SubKey)
	}
	if err := a.live.UpdateLiveSubscriptions(r.Context(), c.DeviceSession, r.PathValue("streamId"), change); err != nil {
		return err
	}
	writeRawJSON(w, http.StatusOK, []byte(`{"ok":true}`))
	return nil
}
