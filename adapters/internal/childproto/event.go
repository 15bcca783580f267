package childproto

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"time"
)

// Event is one Server-Sent Event of a feed's stream.
type Event struct {
	Name string // the event field; "" when absent
	ID   string // the id field, a conversation event's cursor; "" when absent
	Data []byte // the data lines joined by "\n"
}

// ErrBadEvent refuses an event that cannot be framed: a name or id with a
// line break, an id with NUL (which a reader ignores), or data with a
// carriage return (which would end or split a line).
var ErrBadEvent = errors.New("event cannot be framed as Server-Sent Events")

// check refuses what AppendEvent cannot write so that EventReader reads
// it back.
func (ev Event) check() error {
	if strings.ContainsAny(ev.Name, "\r\n") || strings.ContainsAny(ev.ID, "\r\n\x00") ||
		bytes.IndexByte(ev.Data, '\r') >= 0 {
		return ErrBadEvent
	}
	return nil
}

// AppendEvent appends the frame of ev to dst: an "event:" line unless the
// name is empty, an "id:" line unless the id is empty, one "data:" line per
// line of Data (at least one, so the event is dispatched), and a blank
// line. EventReader reads it back as ev.
func AppendEvent(dst []byte, ev Event) ([]byte, error) {
	if err := ev.check(); err != nil {
		return dst, err
	}
	dst = appendHead(dst, ev)
	data := ev.Data
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		dst = append(dst, line...)
		if !more {
			break
		}
		dst = append(dst, "\ndata: "...)
		data = rest
	}
	return append(dst, eventEnd...), nil
}

// appendHead appends the lines of ev before its data, and the data field's
// name.
func appendHead(dst []byte, ev Event) []byte {
	if ev.Name != "" {
		dst = append(append(append(dst, "event: "...), ev.Name...), '\n')
	}
	if ev.ID != "" {
		dst = append(append(append(dst, "id: "...), ev.ID...), '\n')
	}
	return append(dst, "data: "...)
}

var (
	eventEnd         = []byte("\n\n")
	keepAliveComment = []byte(": keepalive\n\n")
)

// EventStreamType is the media type of a feed's answer.
const EventStreamType = "text/event-stream"

// WriteTimeout bounds one write to a feed's stream. A reader that stops
// reading without closing the connection is cut off after it rather than
// holding the child's handler forever.
const WriteTimeout = 30 * time.Second

// StreamWriter writes one feed's text/event-stream answer, as the child
// sends it. Every write is bounded by WriteTimeout where the
// ResponseWriter supports deadlines (a recorder does not; then the
// server's own timeouts alone bound it). Writes are buffered until Flush.
type StreamWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	head []byte // reused for the lines before an event's data
}

// OpenStream answers 200 with the headers of an event stream (Cache-Control
// no-cache, and no buffering by a proxy) and flushes them, so the Hub
// knows at once that the feed is accepted. The error reports a client
// already gone.
func OpenStream(w http.ResponseWriter) (*StreamWriter, error) {
	h := w.Header()
	h.Set("Content-Type", EventStreamType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // a buffering proxy would hold frames back
	w.WriteHeader(http.StatusOK)
	s := &StreamWriter{w: w, rc: http.NewResponseController(w)}
	s.deadline()
	return s, s.Flush()
}

// Write writes ev without flushing it. An event AppendEvent refuses is
// refused before anything is written.
func (s *StreamWriter) Write(ev Event) error {
	if err := ev.check(); err != nil {
		return err
	}
	s.deadline()
	if bytes.IndexByte(ev.Data, '\n') >= 0 { // several data lines: rare, never JSON
		b, _ := AppendEvent(nil, ev)
		return s.write(b)
	}
	// One data line, written as it is: a snapshot is megabytes, not copied.
	s.head = appendHead(s.head[:0], ev)
	return s.write(s.head, ev.Data, eventEnd)
}

// KeepAlive writes a ": keepalive" comment without flushing it.
func (s *StreamWriter) KeepAlive() error {
	s.deadline()
	return s.write(keepAliveComment)
}

// Flush sends what was written. A writer that cannot flush (a middleware
// without Unwrap) still streams, only later; only a failed flush is an
// error.
func (s *StreamWriter) Flush() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// Send writes ev and flushes it.
func (s *StreamWriter) Send(ev Event) error {
	if err := s.Write(ev); err != nil {
		return err
	}
	return s.Flush()
}

func (s *StreamWriter) deadline() {
	// Not every ResponseWriter supports deadlines; see StreamWriter.
	_ = s.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
}

func (s *StreamWriter) write(parts ...[]byte) error {
	for _, p := range parts {
		if _, err := s.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
