package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The session id the fake Hub accepts, and the subscription the tests keep.
const (
	testToken  = "session-id-of-the-test-0123456789abcdefghi"
	testWS     = "myproject"
	testDocKey = "compareTarget=last-commit"
)

// fakeHub emulates the live endpoints of a Hub. Every GET /api/hub/live
// with the right bearer is recorded in opens and served by live; every
// POST /api/hub/live/{streamId}/subscriptions is recorded in posts and
// answered by post. n counts from 1 in each.
type fakeHub struct {
	*httptest.Server
	opens chan url.Values
	posts chan recordedPost

	live func(n int, w http.ResponseWriter, r *http.Request)
	post func(n int, w http.ResponseWriter, r *http.Request)

	nLive, nPost atomic.Int32
}

type recordedPost struct {
	path, auth, contentType, body string
}

func newFakeHub(t *testing.T, live, post func(n int, w http.ResponseWriter, r *http.Request)) *fakeHub {
	h := &fakeHub{opens: make(chan url.Values, 64), posts: make(chan recordedPost, 64), live: live, post: post}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/hub/live", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			fail(w, http.StatusUnauthorized, "authentication required")
			return
		}
		h.opens <- r.URL.Query()
		h.live(int(h.nLive.Add(1)), w, r)
	})
	mux.HandleFunc("POST /api/hub/live/{streamId}/subscriptions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.posts <- recordedPost{path: r.URL.Path, auth: r.Header.Get("Authorization"),
			contentType: r.Header.Get("Content-Type"), body: string(body)}
		h.post(int(h.nPost.Add(1)), w, r)
	})
	h.Server = httptest.NewServer(mux)
	t.Cleanup(h.Close)
	return h
}

// openStream starts an event stream the way the Hub does: headers, then
// the `: open` comment at once.
func openStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store, no-transform")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send(w, ": open\n\n")
}

// send writes frames and flushes them to the client.
func send(w http.ResponseWriter, frames ...string) {
	for _, f := range frames {
		io.WriteString(w, f)
	}
	w.(http.Flusher).Flush()
}

// hold keeps a stream open until the client goes away.
func hold(r *http.Request) { <-r.Context().Done() }

// drop ends the connection abruptly, in the middle of a frame.
func drop(w http.ResponseWriter) {
	send(w, "event: live\ndata: {\"ws\":")
	panic(http.ErrAbortHandler)
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func ok(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true}`)
}

// Frames.

func helloFrame(streamID string) string {
	return fmt.Sprintf("event: hello\ndata: {\"streamId\":%q}\n\n", streamID)
}

func liveFrame(envelope string) string { return "event: live\ndata: " + envelope + "\n\n" }

// docSnapshot is a document data envelope carrying a snapshot.
func docSnapshot(cursor string, revision int) string {
	return liveFrame(fmt.Sprintf(`{"ws":%q,"topic":"document","key":%q,"cursor":%q,"event":{"kind":"data",`+
		`"data":{"kind":"snapshot","epoch":"w1","revision":%d,"roots":[]}}}`, testWS, testDocKey, cursor, revision))
}

// docSignal is a document envelope carrying a signal.
func docSignal(kind, cursor string) string {
	return liveFrame(fmt.Sprintf(`{"ws":%q,"topic":"document","key":%q,"cursor":%q,"event":{"kind":%q}}`,
		testWS, testDocKey, cursor, kind))
}

func activityData(ws, cursor string) string {
	return liveFrame(fmt.Sprintf(`{"ws":%q,"topic":"activity","cursor":%q,"event":{"kind":"data",`+
		`"data":{"running":true,"working":false,"awaiting":true,"finished":false}}}`, ws, cursor))
}

// subsWith is the `subs` the client sends for its one document
// subscription at cursor.
func subsWith(cursor string) string {
	return fmt.Sprintf(`[{"topic":"document","key":%q,"cursor":%q}]`, testDocKey, cursor)
}

// Running a stream.

// lines is an io.Writer that hands each write (the client writes one line
// at a time) to the test.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- strings.TrimSuffix(string(p), "\n")
	return len(p), nil
}

// drain returns what was written and not yet read. Call it once the
// writer's goroutine is done.
func (l lines) drain() []string {
	var got []string
	for {
		select {
		case s := <-l:
			got = append(got, s)
		default:
			return got
		}
	}
}

// waits records the backoff the stream asked for, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// testStream is a stream of the test workspace against h, with its
// document subscription at no cursor, writing to out and recording its
// waits.
func testStream(h *fakeHub, out lines) (*stream, *waits) {
	hub, _ := url.Parse(h.URL)
	s := newStream(h.Client(), hub, testToken, testWS, out, &subscription{Topic: topicDocument, Key: testDocKey})
	w := &waits{}
	s.wait = w.wait
	return s, w
}

// start runs s until the returned cancel; done then receives run's result.
func start(t *testing.T, s *stream) (cancel context.CancelFunc, done <-chan error) {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	ch := make(chan error, 1)
	go func() { ch <- s.run(ctx) }()
	return cancel, ch
}

// recv takes the next value of ch, failing the test if none comes soon.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting")
		panic("unreachable")
	}
}

func containsPrefix(got []string, prefix string) bool {
	for _, s := range got {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
