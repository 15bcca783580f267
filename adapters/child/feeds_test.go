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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
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

// feedURI is the path and query of the feed of topic with key and cursor,
// as the Hub asks for it.
func feedURI(t *testing.T, topic hub.Topic, key, cursor string) string {
	t.Helper()
	uri, err := childproto.FeedRequest{Topic: topic, Key: key, Cursor: cursor}.URI()
	if err != nil {
		t.Fatalf("the %s feed's URI: %v", topic, err)
	}
	return uri
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
		{"activity", childproto.FeedPath(hub.TopicActivity), "data", `{"working":false,"awaiting":false,"shells":0}`},
		{"inventory", childproto.FeedPath(hub.TopicInventory), "data", `{"type":"conversation.inventory"}`},
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
			is.Equal(first.event, tc.event)          // a data event, at once
			is.Equal(first.data, tc.data)            // with its opening value
			is.Equal(s.next(t).comment, "keepalive") // then keepalives while nothing changes
		})
	}

	t.Run("unknown conversation", func(t *testing.T) {
		is := is.New(t)
		for _, path := range []string{
			feedURI(t, hub.TopicConversation, "c1", ""),
			feedURI(t, hub.TopicConversation, "c1", "eyJ2IjoxfQ"),
		} {
			var e struct{ Error string }
			resp := open(t.Context(), t, c, path)
			is.Equal(resp.StatusCode, http.StatusNotFound)                // no agent runs conversations yet
			is.Equal(resp.Header.Get("Content-Type"), "application/json") // as JSON
			is.Equal(resp.Header.Get("Cache-Control"), "no-store")        // never cached
			is.NoErr(json.NewDecoder(resp.Body).Decode(&e))               // decodable
			is.Equal(e.Error, "unknown conversation")                     // saying so
		}
		conv := childproto.FeedPath(hub.TopicConversation)
		for _, path := range []string{conv, conv + "?key=a&key=b"} {
			is.Equal(open(t.Context(), t, c, path).StatusCode, http.StatusBadRequest) // exactly one key is needed
		}
	})

	t.Run("no document feed configured", func(t *testing.T) {
		is := is.New(t)
		is.Equal(open(t.Context(), t, c, feedURI(t, hub.TopicDocument, "", "")).StatusCode, http.StatusNotFound) // unserved, as any unknown path
	})

	t.Run("only GET", func(t *testing.T) {
		is := is.New(t)
		resp, err := c.Post("http://session"+childproto.FeedPath(hub.TopicActivity), "text/plain", nil)
		is.NoErr(err) // answered
		resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusNotFound) // another method is not found
	})
}

// Every topic the topic table gives a feed is served: the child answers
// its feed's path itself (a stream, or a refusal of its own) rather than
// as an unknown path, and checks its query against the table.
func TestEveryFeedOfTheTopicTableIsServed(t *testing.T) {
	t.Parallel()
	documents := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	c := serve(t, child.NewHandler("alpha", child.HandlerOptions{Documents: documents}), context.Background())
	served := 0
	for _, s := range hub.Topics() {
		if !s.Feed {
			continue
		}
		served++
		t.Run(string(s.Name), func(t *testing.T) {
			is := is.New(t)
			key := ""
			if s.Key == hub.KeyRequired {
				key = "k"
			}
			ctx, cancel := context.WithTimeout(t.Context(), feedWait)
			defer cancel()
			resp := open(ctx, t, c, feedURI(t, s.Name, key, ""))
			var e struct{ Error string }
			if resp.StatusCode == http.StatusNotFound {
				is.NoErr(json.NewDecoder(resp.Body).Decode(&e)) // a JSON refusal
			}
			is.True(e.Error != "not found") // the topic's feed answers, not the unknown path's 404

			bad := open(ctx, t, c, childproto.FeedPath(s.Name)+"?colour=blue")
			is.Equal(bad.StatusCode, http.StatusBadRequest) // a parameter no topic takes is refused
		})
	}
	if served == 0 {
		t.Fatal("the topic table gives no topic a feed")
	}
}

func TestFeedsEndWithTheServersBaseContext(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	base, stopServer := context.WithCancel(context.Background())
	defer stopServer()
	c := serve(t, child.NewHandler("alpha", child.HandlerOptions{}), base)
	var streams []*sseStream
	for _, path := range []string{childproto.FeedPath(hub.TopicActivity), childproto.FeedPath(hub.TopicInventory)} {
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

	resp := c.stream(t, feedURI(t, hub.TopicDocument, "compareTarget=last-commit&scope=folder", ""))
	is.Equal(resp.StatusCode, http.StatusOK)                       // the feed is accepted
	is.Equal(resp.Header.Get("Content-Type"), "text/event-stream") // as SSE
	s := readStream(resp.Body)
	first := s.next(t)
	is.Equal(first.event, "data") // document frames are data events
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

	bad := c.stream(t, feedURI(t, hub.TopicDocument, "scope=nope", ""))
	is.Equal(bad.StatusCode, http.StatusBadRequest) // a bad key is refused

	c.cancel()
	is.NoErr(s.end(t))  // stopping the child ends the feed in order
	is.NoErr(c.wait(t)) // and the child stops cleanly
}

func TestMainEndsFeedsWhenTheHubGoes(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha")
	s := readStream(c.stream(t, childproto.FeedPath(hub.TopicActivity)).Body)
	is.Equal(s.next(t).event, "data") // the feed is open
	c.stdin.Close()
	is.NoErr(s.end(t))  // the Hub's end ends the feed in order
	is.NoErr(c.wait(t)) // and the child
}
