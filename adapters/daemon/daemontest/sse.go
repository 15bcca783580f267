package daemontest

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
)

// Event is one server-sent event: its name ("" for the default message),
// its data (lines joined by "\n") and its id, if any. Comments are not
// events.
type Event struct {
	Name, Data, ID string
}

// SSEReader reads the events of a text/event-stream body on a goroutine
// of its own, so that a test waits for the next one with a deadline. The
// goroutine ends when the body does: close the body to stop it.
type SSEReader struct {
	events chan Event
	err    error // why the stream ended; read after events is closed
}

// ErrStreamEnded is returned once the stream has ended without an error.
var ErrStreamEnded = errors.New("daemontest: the event stream ended")

// ReadSSE starts reading body's events. Through a Secrets client, every
// frame read is recorded as it arrives.
func ReadSSE(body io.Reader) *SSEReader {
	r := &SSEReader{events: make(chan Event, 256)}
	go r.read(body)
	return r
}

func (r *SSEReader) read(body io.Reader) {
	defer close(r.events)
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 16<<20)
	var ev Event
	var data []string
	fields := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if fields {
				ev.Data = strings.Join(data, "\n")
				r.events <- ev
			}
			ev, data, fields = Event{}, nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: ": open", ": keepalive"
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "event":
			ev.Name, fields = value, true
		case "data":
			data, fields = append(data, value), true
		case "id":
			ev.ID, fields = value, true
		}
	}
	r.err = sc.Err()
}

// Next returns the next event, or an error once the stream has ended
// (ErrStreamEnded, or the read's error) or ctx has.
func (r *SSEReader) Next(ctx context.Context) (Event, error) {
	select {
	case ev, ok := <-r.events:
		if !ok {
			if r.err != nil {
				return Event{}, r.err
			}
			return Event{}, ErrStreamEnded
		}
		return ev, nil
	case <-ctx.Done():
		return Event{}, context.Cause(ctx)
	}
}

// Until returns the first event ok accepts, skipping the others.
func (r *SSEReader) Until(ctx context.Context, ok func(Event) bool) (Event, error) {
	for {
		ev, err := r.Next(ctx)
		if err != nil || ok(ev) {
			return ev, err
		}
	}
}

// Ended skips events until the stream ends and returns nil then, however
// it ended: cleanly, or cut short (the Hub cuts a stream it ends while a
// write is pending, which the client reads as io.ErrUnexpectedEOF). It
// returns ctx's cause if ctx ends first.
func (r *SSEReader) Ended(ctx context.Context) error {
	for {
		if _, err := r.Next(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return nil
		}
	}
}
