package childproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxEventBytes is the Hub's bound of one event's data. A document
// snapshot of a 50,000-file repository is several megabytes; an event past
// the bound fails the feed rather than growing the Hub's memory without
// end.
const MaxEventBytes = 64 << 20

// lineSlack is what a line may hold beyond an event's data: its field
// name and the separators.
const lineSlack = 64

// keepLineBuffer is the capacity of line buffer kept between lines; a
// larger one (a snapshot's line) is dropped once used.
const keepLineBuffer = 64 << 10

// ErrEventTooLarge fails a stream whose event exceeds its reader's bound.
var ErrEventTooLarge = errors.New("feed event too large")

// EventReader parses a text/event-stream body into events, as the Hub
// reads a feed. It follows the HTML standard's interpretation for what the
// child sends: lines end in LF or CRLF (a lone CR is not a line end); a
// line starting with ':' is a comment; "field: value" loses one space
// after the colon; data lines are joined by "\n"; unknown fields are
// ignored; a blank line dispatches the event, unless it has no data line,
// so frames made only of comments (keepalives) or without data are
// skipped as liveness; an unfinished event at the end of the body is
// dropped. Unlike the standard's last event id, the id is the event's own:
// a conversation event's cursor never comes from the one before.
type EventReader struct {
	br   *bufio.Reader
	max  int // bound of one event's data
	line []byte
}

// NewEventReader reads events from r, each with at most max bytes of data.
func NewEventReader(r io.Reader, max int) *EventReader {
	return &EventReader{br: bufio.NewReaderSize(r, 32<<10), max: max}
}

// Next returns the next event with data; its Data is the caller's. At the
// end of the body it returns io.EOF; a read failure is an error, and an
// event or line over the bound is ErrEventTooLarge.
func (r *EventReader) Next() (Event, error) {
	var ev Event
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				return ev, nil
			}
			ev = Event{}
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			ev.Name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 { // the standard ignores an id with NUL
				ev.ID = string(value)
			}
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			if len(ev.Data)+len(value) > r.max {
				return Event{}, ErrEventTooLarge
			}
			ev.Data = append(ev.Data, value...)
			hasData = true
		}
	}
}

// readLine returns the next line without its LF or CRLF, valid until the
// next call. A line longer than an event may be fails; a last line without
// its end is dropped, as the unfinished event it belongs to.
func (r *EventReader) readLine() ([]byte, error) {
	if cap(r.line) > keepLineBuffer {
		r.line = nil
	}
	r.line = r.line[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.line)+len(chunk) > r.max+lineSlack {
			return nil, ErrEventTooLarge
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			r.line = append(r.line, chunk...)
			continue
		case errors.Is(err, io.EOF):
			return nil, io.EOF
		case err != nil:
			return nil, fmt.Errorf("read feed: %w", err)
		}
		line := chunk
		if len(r.line) > 0 {
			r.line = append(r.line, chunk...)
			line = r.line
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return line, nil
	}
}
