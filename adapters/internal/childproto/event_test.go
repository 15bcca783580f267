package childproto_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// readEvents reads every event of body with the Hub's reader.
func readEvents(t *testing.T, body io.Reader, max int) ([]childproto.Event, error) {
	t.Helper()
	r := childproto.NewEventReader(body, max)
	var evs []childproto.Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// sameEvent compares events, nil data as empty.
func sameEvent(a, b childproto.Event) bool {
	return a.Name == b.Name && a.ID == b.ID && bytes.Equal(a.Data, b.Data)
}

var roundTripEvents = []childproto.Event{
	{Name: "state", Data: []byte(`{"kind":"snapshot"}`)},
	{Name: "chat", ID: "eyJ2IjoxfQ==", Data: []byte(`{"sequence":1}`)},
	{Data: []byte(`"no name"`)},
	{Name: "empty"},
	{Name: " leading space", ID: " x", Data: []byte(" leading space")},
	{Name: "a:b", ID: "id:with:colons", Data: []byte("data: inside")},
	{Name: "lines", Data: []byte("one\ntwo\n\nfour\n")},
	{Name: "ünïcode", Data: []byte("\x00 nul and ünïcode")},
}

func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	for _, ev := range roundTripEvents {
		is := is.New(t)
		b, err := childproto.AppendEvent(nil, ev)
		is.NoErr(err) // framed
		got, err := readEvents(t, bytes.NewReader(b), 1<<10)
		is.True(errors.Is(err, io.EOF)) // the body ends in order
		is.Equal(len(got), 1)           // one event
		is.True(sameEvent(got[0], ev))  // the event back
	}
}

func TestStreamWriterRoundTrip(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	rec := httptest.NewRecorder()
	s, err := childproto.OpenStream(rec)
	is.NoErr(err)                                                   // opened
	is.True(rec.Flushed)                                            // the headers went out at once
	is.Equal(rec.Code, http.StatusOK)                               // accepted
	is.Equal(rec.Header().Get("Content-Type"), "text/event-stream") // as SSE
	is.Equal(rec.Header().Get("Cache-Control"), "no-cache")         // never cached
	is.Equal(rec.Header().Get("X-Accel-Buffering"), "no")           // nor held by a proxy
	for i, ev := range roundTripEvents {
		if i%2 == 0 {
			is.NoErr(s.Send(ev)) // sent
		} else {
			is.NoErr(s.Write(ev))   // written
			is.NoErr(s.KeepAlive()) // with a keepalive between events
		}
	}
	is.NoErr(s.Flush())                                               // flushed
	is.True(strings.Contains(rec.Body.String(), "\n: keepalive\n\n")) // keepalives are comments
	got, err := readEvents(t, rec.Body, 1<<10)
	is.True(errors.Is(err, io.EOF))          // the body ends in order
	is.Equal(len(got), len(roundTripEvents)) // every event, keepalives skipped
	for i := range got {
		is.True(sameEvent(got[i], roundTripEvents[i])) // each back, in order
	}
}

func TestEventsThatCannotBeFramed(t *testing.T) {
	t.Parallel()
	for _, ev := range []childproto.Event{
		{Name: "a\nb", Data: []byte("1")},
		{Name: "a\rb", Data: []byte("1")},
		{ID: "a\nb", Data: []byte("1")},
		{ID: "a\x00b", Data: []byte("1")},
		{Name: "x", Data: []byte("a\rb")},
		{Name: "x", Data: []byte("a\r\nb")},
	} {
		is := is.New(t)
		b, err := childproto.AppendEvent([]byte("kept"), ev)
		is.True(errors.Is(err, childproto.ErrBadEvent)) // refused
		is.Equal(string(b), "kept")                     // appending nothing
		rec := httptest.NewRecorder()
		s, err := childproto.OpenStream(rec)
		is.NoErr(err)                                           // opened
		is.True(errors.Is(s.Write(ev), childproto.ErrBadEvent)) // the writer refuses it too
		is.Equal(rec.Body.Len(), 0)                             // before writing a byte
	}
}

func TestEventReader(t *testing.T) {
	t.Parallel()
	ev := func(name, id, data string) childproto.Event {
		return childproto.Event{Name: name, ID: id, Data: []byte(data)}
	}
	for _, tc := range []struct {
		name, body string
		want       []childproto.Event
	}{
		{"comments and keepalives skipped", ": open\n\n: keepalive\n\nevent: state\ndata: 1\n\n: keepalive\n\n",
			[]childproto.Event{ev("state", "", "1")}},
		{"CRLF framing", "event: state\r\ndata: {}\r\n\r\n", []childproto.Event{ev("state", "", "{}")}},
		{"a lone CR is no line end", "event: a\rb\ndata: 1\n\n", []childproto.Event{ev("a\rb", "", "1")}},
		{"data lines joined by LF", "data: a\ndata:b\n\n", []childproto.Event{ev("", "", "a\nb")}},
		{"events without data skipped", "event: nodata\n\nevent: x\ndata: 1\n\n", []childproto.Event{ev("x", "", "1")}},
		{"an id is the event's own", "id: c1\ndata: 1\n\ndata: 2\n\n", []childproto.Event{ev("", "c1", "1"), ev("", "", "2")}},
		{"an id with NUL is ignored", "id: a\x00b\ndata: 1\n\n", []childproto.Event{ev("", "", "1")}},
		{"unknown fields ignored", "retry: 10\nfuture: x\nevent: e\ndata: 1\n\n", []childproto.Event{ev("e", "", "1")}},
		{"an unfinished event dropped", "data: 1\n\ndata: 2\n", []childproto.Event{ev("", "", "1")}},
		{"an unfinished line dropped", "data: 1\n\ndata: 2", []childproto.Event{ev("", "", "1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := readEvents(t, strings.NewReader(tc.body), 1<<10)
			is.True(errors.Is(err, io.EOF))  // the end, in order
			is.Equal(len(got), len(tc.want)) // the events
			for i := range got {
				is.True(sameEvent(got[i], tc.want[i])) // each as sent
			}
		})
	}
}

func TestEventReaderBounds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body string }{
		{"an event over the bound", "data: " + strings.Repeat("x", 40) + "\n\n"},
		{"data lines over the bound together", "data: " + strings.Repeat("1", 20) + "\ndata: " + strings.Repeat("1", 20) + "\n\n"},
		{"a line over the bound", ": " + strings.Repeat("x", 200) + "\n\n"},
		{"a line over the bound beyond the buffer", ": " + strings.Repeat("x", 100<<10) + "\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := readEvents(t, strings.NewReader(tc.body), 32)
			is.Equal(len(got), 0)                                // nothing read
			is.True(errors.Is(err, childproto.ErrEventTooLarge)) // the stream fails
		})
	}
	t.Run("a read failure", func(t *testing.T) {
		is := is.New(t)
		boom := errors.New("boom")
		_, err := readEvents(t, io.MultiReader(strings.NewReader("data: 1\n"), errReader{boom}), 32)
		is.True(errors.Is(err, boom)) // the failure, wrapped
	})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
