package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// This file sets up the live workloads' servers: a Wharf whose backend is
// fakes.Backend (the real Hub, httpapi handler and SQLite store on a
// loopback listener; only the workspace sessions are in-memory, so the
// benchmark can make them report activity and send inventory ticks), the
// SSE probe beside it, and the tap both are served through.

// benchEpoch is the origin of the offsets the live workloads record, so
// that a publish and a receipt in different goroutines compare.
var benchEpoch = time.Now()

func sinceEpoch() time.Duration { return time.Since(benchEpoch) }

// liveTap wraps a live server's handler to observe, on the server's side,
// what the client cannot: whether an inventory envelope is written to a
// stream after a POST removing that subscription answered and before the
// next one adding it started (W5), and when the handler of the stream
// tagged bench=slow returned (W7). It costs a stream an atomic load per
// write.
type liveTap struct {
	next       http.Handler
	mu         sync.Mutex
	streams    map[string]*tapStream
	violations atomic.Int64 // inventory writes while removed
	slowEnded  atomic.Int64 // sinceEpoch when the slow stream's handler returned; 0 before
}

type tapStream struct{ removed atomic.Bool }

func (t *liveTap) wrap(h http.Handler) http.Handler {
	t.next = h
	t.streams = map[string]*tapStream{}
	return t
}

func (t *liveTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch {
	case r.Method == http.MethodGet && path == "/api/hub/live":
		tw := &tapWriter{ResponseWriter: w, t: t}
		t.next.ServeHTTP(tw, r)
		if r.URL.Query().Get("bench") == "slow" {
			t.slowEnded.Store(int64(sinceEpoch()))
		}
		if tw.id != "" {
			t.mu.Lock()
			delete(t.streams, tw.id)
			t.mu.Unlock()
		}
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/api/hub/live/") && strings.HasSuffix(path, "/subscriptions"):
		id := strings.TrimSuffix(strings.TrimPrefix(path, "/api/hub/live/"), "/subscriptions")
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		r.Body = io.NopCloser(bytes.NewReader(body))
		t.mu.Lock()
		st := t.streams[id]
		t.mu.Unlock()
		if st != nil && bytes.HasPrefix(body, []byte(`{"add"`)) {
			st.removed.Store(false)
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		t.next.ServeHTTP(sw, r)
		if st != nil && sw.status == http.StatusOK && bytes.HasPrefix(body, []byte(`{"remove"`)) {
			st.removed.Store(true)
		}
	default:
		t.next.ServeHTTP(w, r)
	}
}

// tapWriter learns its stream's id from the hello and checks every write.
type tapWriter struct {
	http.ResponseWriter
	t  *liveTap
	id string
	st *tapStream
}

func (w *tapWriter) Write(p []byte) (int, error) {
	if w.st == nil {
		if id := jsonString(p, "streamId"); id != nil {
			w.id, w.st = string(id), &tapStream{}
			w.t.mu.Lock()
			w.t.streams[w.id] = w.st
			w.t.mu.Unlock()
		}
	} else if w.st.removed.Load() && bytes.Contains(p, []byte(`"topic":"inventory"`)) {
		w.t.violations.Add(1)
	}
	return w.ResponseWriter.Write(p)
}

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusWriter records the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// liveWharf is the Wharf of the live workloads with its two running
// workspaces: A, the one every stream opens on (its activity toggles, its
// inventory ticks), and B, whose inventory feeds W7's slow stream.
type liveWharf struct {
	*wharf
	backend *fakes.Backend
	tap     *liveTap
	session string
	fl      *fleet
	a, b    string
}

func startLiveWharf(ctx context.Context) (*liveWharf, error) {
	dir, err := os.MkdirTemp("", "wharf-bench-live-")
	if err != nil {
		return nil, err
	}
	lw := &liveWharf{backend: fakes.NewBackend(), tap: &liveTap{}}
	if lw.wharf, err = openWharf(ctx, dir, lw.backend, 0, lw.tap.wrap); err != nil {
		return nil, fmt.Errorf("start wharf: %w", err)
	}
	fail := func(err error) (*liveWharf, error) {
		lw.close()
		return nil, err
	}
	if lw.session, _, err = lw.login(ctx, "bench live"); err != nil {
		return fail(err)
	}
	if lw.fl, err = registerFleet(ctx, lw.wharf, lw.session, 2); err != nil {
		return fail(err)
	}
	lw.a, lw.b = lw.fl.ids[0], lw.fl.ids[1]
	client := newClient()
	defer client.CloseIdleConnections()
	for _, id := range lw.fl.ids {
		if err := lw.startWorkspace(ctx, client, lw.session, id); err != nil {
			return fail(err)
		}
		// The Hub watches the activity of every running session itself.
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := lw.backend.WaitFeed(wctx, id, hub.TopicActivity, "", 1)
		cancel()
		if err != nil {
			return fail(fmt.Errorf("the Hub did not watch %s's activity: %w", id, err))
		}
	}
	return lw, nil
}

func (lw *liveWharf) close() {
	if lw.wharf != nil {
		lw.wharf.close()
	}
	lw.fl.remove()
}

// inventoryFeed returns the inventory feed of ws the Hub has open now, or
// nil when it has none.
func (lw *liveWharf) inventoryFeed(ws string) *fakes.Feed {
	n := lw.backend.FeedOpens(ws, hub.TopicInventory, "")
	if n == 0 {
		return nil
	}
	f, err := lw.backend.WaitFeed(context.Background(), ws, hub.TopicInventory, "", n)
	if err != nil || f.IsClosed() {
		return nil
	}
	return f
}

// waitInventoryClosed waits, up to limit, until the Hub has released
// ws's inventory upstream (it lingers after its last subscriber leaves).
func (lw *liveWharf) waitInventoryClosed(ctx context.Context, ws string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for lw.inventoryFeed(ws) != nil && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
}

// liveTarget is a live server as the workloads drive it.
type liveTarget struct {
	name     string
	hostPort string
	header   http.Header
	ws       string // the workspace every stream opens on
	// summaries is the count of activity envelopes a stream with
	// activity=1 gets on opening (one per registered workspace).
	summaries int
	// activity publishes one change of ws's activity (work toggles).
	activity func(working bool)
	// tick publishes an inventory tick on workspace on; false when there
	// was no upstream to send it to.
	tick func(on string, data []byte) bool
	tap  *liveTap
	lw   *liveWharf // nil for the probe
}

func (lw *liveWharf) target() liveTarget {
	return liveTarget{name: "Wharf", hostPort: lw.hostPort, header: bearer(lw.session), ws: lw.a, summaries: len(lw.fl.ids),
		activity: func(working bool) { lw.backend.SetActivity(lw.a, working, false) },
		tick: func(on string, data []byte) bool {
			f := lw.inventoryFeed(on)
			if f == nil {
				return false
			}
			f.Send(hub.FeedFrame{Kind: hub.FrameData, Data: data})
			return true
		},
		tap: lw.tap, lw: lw}
}

// startProbeTarget serves an SSE probe for workspace ws through its own tap.
func startProbeTarget(ws string) (liveTarget, *server, error) {
	p := newSSEProbe(ws)
	tap := &liveTap{}
	srv, err := startServer(tap.wrap(p.handler()))
	if err != nil {
		return liveTarget{}, nil, err
	}
	return liveTarget{name: "probe", hostPort: srv.hostPort, header: http.Header{}, ws: ws, summaries: 1,
		activity: p.publishActivity,
		tick:     func(_ string, data []byte) bool { p.publishInventory(data); return true },
		tap:      tap}, srv, nil
}

// livePath is the stream's request path and query.
func livePath(ws string, activity bool, subs, extra string) string {
	q := "/api/hub/live?ws=" + ws
	if activity {
		q += "&activity=1"
	}
	if subs != "" {
		q += "&subs=" + url.QueryEscape(subs)
	}
	return q + extra
}

// inventoryTick is the payload of tick n, padded to about pad bytes.
func inventoryTick(n int64, pad int) []byte {
	b := fmt.Appendf(nil, `{"type":"conversation.inventory","benchSeq":%d`, n)
	if pad > 0 {
		b = append(b, `,"pad":"`...)
		b = append(b, bytes.Repeat([]byte("x"), pad)...)
		b = append(b, '"')
	}
	return append(b, '}')
}
