package child_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// feedWait bounds every wait of the feed tests.
const feedWait = 10 * time.Second

// sseEvent is one frame of a stream as the test reads it: an event, or a
// comment-only frame.
type sseEvent struct {
	comment, event, data string
}

// sseStream reads a response body's frames on a goroutine. err is set
// before events is closed: nil for an end in order (EOF).
type sseStream struct {
	events chan sseEvent
	err    error
}

func readStream(body io.Reader) *sseStream {
	s := &sseStream{events: make(chan sseEvent, 16)}
	go func() {
		defer close(s.events)
		br := bufio.NewReader(body)
		var ev sseEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				if !errors.Is(err, io.EOF) {
					s.err = err
				}
				return
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "":
				s.events <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, ": "):
				ev.comment = strings.TrimPrefix(line, ": ")
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// next returns the next frame, failing the test after feedWait or at the
// end of the stream.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("stream ended (err %v), want a frame", s.err)
		}
		return ev
	case <-time.After(feedWait):
		t.Fatalf("no frame within %s", feedWait)
		return sseEvent{}
	}
}

// end waits for the end of the stream, skipping frames, and returns the
// read error: nil for an end in order.
func (s *sseStream) end(t *testing.T) error {
	t.Helper()
	timeout := time.After(feedWait)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return s.err
			}
		case <-timeout:
			t.Fatalf("stream did not end within %s", feedWait)
			return nil
		}
	}
}

// open sends GET path through c and returns the response, closed at the
// end of the test; the request ends with ctx.
func open(ctx context.Context, t *testing.T, c *http.Client, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://session"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// serve runs h on a test server whose requests' base context is base, and
// returns a client that reaches it whatever the URL's host.
func serve(t *testing.T, h http.Handler, base context.Context) *http.Client {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	t.Cleanup(srv.Close)
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, "tcp", srv.Listener.Addr().String())
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestFeeds(t *testing.T) {
	t.Parallel()
	c := serve(t, child.NewHandler("alpha", child.HandlerOptions{KeepAlive: time.Millisecond}), context.Background())

	for _, tc := range []struct {
		name, path, event, data string
	}{
		{"activity", childproto.ActivityFeedPath, "activity", `{"working":false,"awaiting":false}`},
		{"inventory", childproto.InventoryFeedPath, "inventory", `{"type":"conversation.inventory"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			ctx, cancel := context.WithTimeout(t.Context(), feedWait)
			defer cancel()
			resp := open(ctx, t, c, tc.path)
			is.Equal(resp.StatusCode, http.StatusOK)                       // accepted
			is.Equal(resp.Header.Get("Content-Type"), "text/event-stream") // as SSE
			is.Equal(resp.Header.Get("Cache-Control"), "no-cache")         // never cached
			s := readStream(resp.Body)
			first := s.next(t)
			is.Equal(first.event, tc.event)          // the topic's event, at once
			is.Equal(first.data, tc.data)            // with its opening value
			is.Equal(s.next(t).comment, "keepalive") // then keepalives while nothing changes
		})
	}

	t.Run("unknown conversation", func(t *testing.T) {
		is := is.New(t)
		for _, path := range []string{
			childproto.ConversationFeedPath + "?id=c1",
			childproto.ConversationFeedPath + "?id=c1&cursor=" + url.QueryEscape("eyJ2IjoxfQ"),
		} {
			var e struct{ Error string }
			resp := open(t.Context(), t, c, path)
			is.Equal(resp.StatusCode, http.StatusNotFound)                // no agent runs conversations yet
			is.Equal(resp.Header.Get("Content-Type"), "application/json") // as JSON
			is.Equal(resp.Header.Get("Cache-Control"), "no-store")        // never cached
			is.NoErr(json.NewDecoder(resp.Body).Decode(&e))               // decodable
			is.Equal(e.Error, "unknown conversation")                     // saying so
		}
		for _, path := range []string{childproto.ConversationFeedPath, childproto.ConversationFeedPath + "?id=a&id=b"} {
			is.Equal(open(t.Context(), t, c, path).StatusCode, http.StatusBadRequest) // exactly one id is needed
		}
	})

	t.Run("no document feed configured", func(t *testing.T) {
		is := is.New(t)
		is.Equal(open(t.Context(), t, c, childproto.DocumentFeedPath).StatusCode, http.StatusNotFound) // unserved, as any unknown path
	})

	t.Run("only GET", func(t *testing.T) {
		is := is.New(t)
		resp, err := c.Post("http://session"+childproto.ActivityFeedPath, "text/plain", nil)
		is.NoErr(err) // answered
		resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusNotFound) // another method is not found
	})
}

func TestFeedsEndWithTheServersBaseContext(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	base, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	c := serve(t, child.NewHandler("alpha", child.HandlerOptions{}), base)
	var streams []*sseStream
	for _, path := range []string{childproto.ActivityFeedPath, childproto.InventoryFeedPath} {
		s := readStream(open(t.Context(), t, c, path).Body)
		s.next(t) // the stream is open
		streams = append(streams, s)
	}
	stopServer()
	for _, s := range streams {
		is.NoErr(s.end(t)) // each stream ends, in order
	}
}

// stream opens a feed of the in-process child over its socket; the
// request ends with the test.
func (c *inProcess) stream(t *testing.T, path string) *http.Response {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, "unix", c.socket)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return open(t.Context(), t, &http.Client{Transport: tr}, path)
}

func TestMainServesTheDocumentFeed(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha")
	dir := filepath.Dir(c.socket)
	is.NoErr(os.WriteFile(filepath.Join(dir, "README.md"), []byte("# hi\n"), 0o600)) // a document to index

	resp := c.stream(t, childproto.DocumentFeedPath+"?key="+url.QueryEscape("compareTarget=last-commit&scope=folder"))
	is.Equal(resp.StatusCode, http.StatusOK)                       // the feed is accepted
	is.Equal(resp.Header.Get("Content-Type"), "text/event-stream") // as SSE
	s := readStream(resp.Body)
	first := s.next(t)
	is.Equal(first.event, "state") // document frames are state events
	var snap struct {
		Kind                 string `json:"kind"`
		Epoch                string `json:"epoch"`
		WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
		CompareTarget        string `json:"compareTarget"`
	}
	is.NoErr(json.Unmarshal([]byte(first.data), &snap)) // JSON
	is.Equal(snap.Kind, "snapshot")                     // a snapshot first
	is.True(snap.Epoch != "")                           // of a feed epoch
	is.Equal(snap.WorkspaceAPIRevision, 24)             // at the child's revision
	is.Equal(snap.CompareTarget, "last-commit")         // for the key's context

	bad := c.stream(t, childproto.DocumentFeedPath+"?key="+url.QueryEscape("scope=nope"))
	is.Equal(bad.StatusCode, http.StatusBadRequest) // a bad key is refused

	c.cancel()
	is.NoErr(s.end(t))  // stopping the child ends the feed in order
	is.NoErr(c.wait(t)) // and the child stops cleanly
}

func TestMainEndsFeedsWhenTheHubGoes(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha")
	s := readStream(c.stream(t, childproto.ActivityFeedPath).Body)
	is.Equal(s.next(t).event, "activity") // the feed is open
	c.stdin.Close()
	is.NoErr(s.end(t))  // the Hub's end ends the feed in order
	is.NoErr(c.wait(t)) // and the child
}
