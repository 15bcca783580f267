package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// sseProbe is the live workloads' baseline, a minimal fan-out: a handler
// per stream waiting on its queue; the publisher encodes each envelope
// once, in Wharf's field order, and appends it to every follower's queue.
// It knows the activity topic (with the summary a stream opens with) and
// the inventory topic (with a reconnect's join: the latest tick unless the
// cursor is the head, then `ready`; and Wharf's rule that a removal
// answers once no batch holding removed envelopes is being written). No
// authentication, keepalive, backlog bound or store.
type sseProbe struct {
	ws             string
	mu             sync.Mutex // guards what follows and every stream's inv
	byID           map[string]*probeStream
	actSeq, invSeq int64
	working        bool
	latest         []byte // the latest inventory tick
}

type probeStream struct {
	activity, inv bool
	mu            sync.Mutex // guards queue
	sendMu        sync.Mutex // held while a batch is written
	queue         [][]byte
	wake          chan struct{}
}

// envelopeBytes encodes a LiveEnvelope the way Wharf writes one.
func envelopeBytes(ws, topic string, seq int64, kind string, data []byte) []byte {
	b := fmt.Appendf(nil, `{"ws":%q,"topic":%q,"cursor":"probe.%d","event":{"kind":%q`, ws, topic, seq, kind)
	if data != nil {
		b = append(append(b, `,"data":`...), data...)
	}
	return append(b, "}}"...)
}

func activityData(working bool) []byte {
	return fmt.Appendf(nil, `{"running":true,"working":%t,"awaiting":false,"finished":%t}`, working, !working)
}

func (p *sseProbe) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/hub/live", p.serveLive)
	mux.HandleFunc("POST /api/hub/live/{id}/subscriptions", p.serveSubs)
	return mux
}

func (s *probeStream) push(envs ...[]byte) {
	s.mu.Lock()
	s.queue = append(s.queue, envs...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// joinLocked owes s the latest tick (unless cursor is the head), then
// ready; p.mu is held.
func (p *sseProbe) joinLocked(s *probeStream, cursor string) {
	s.inv = true
	if cursor != "probe."+strconv.FormatInt(p.invSeq, 10) && p.latest != nil {
		s.push(envelopeBytes(p.ws, "inventory", p.invSeq, "data", p.latest))
	}
	s.push(envelopeBytes(p.ws, "inventory", p.invSeq, "ready", nil))
}

func (p *sseProbe) serveLive(w http.ResponseWriter, r *http.Request) {
	var subs []struct{ Topic, Cursor string }
	if raw := r.URL.Query().Get("subs"); raw != "" && json.Unmarshal([]byte(raw), &subs) != nil {
		http.Error(w, `{"error":"subs must be a JSON array"}`, http.StatusBadRequest)
		return
	}
	s, id, rc := &probeStream{activity: r.URL.Query().Get("activity") == "1", wake: make(chan struct{}, 1)}, fmt.Sprintf("p%p", r), http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	if w.Write([]byte(": open\n\nevent: hello\ndata: {\"streamId\":\"" + id + "\"}\n\n")); rc.Flush() != nil {
		return
	}
	p.mu.Lock()
	if p.byID[id] = s; s.activity { // the summary Wharf opens activity with
		s.push(envelopeBytes(p.ws, "activity", p.actSeq, "data", activityData(p.working)))
	}
	for _, sub := range subs {
		if sub.Topic == "inventory" {
			p.joinLocked(s, sub.Cursor)
		}
	}
	p.mu.Unlock()
	defer func() { p.mu.Lock(); delete(p.byID, id); p.mu.Unlock() }()
	var buf bytes.Buffer
	for err := error(nil); err == nil; {
		select {
		case <-s.wake:
		case <-r.Context().Done():
			return
		}
		s.sendMu.Lock()
		s.mu.Lock()
		for _, env := range s.queue {
			buf.WriteString("event: live\ndata: ")
			buf.Write(env)
			buf.WriteString("\n\n")
		}
		s.queue = s.queue[:0]
		s.mu.Unlock()
		if _, err = w.Write(buf.Bytes()); err == nil {
			err = rc.Flush()
		}
		buf.Reset()
		s.sendMu.Unlock()
	}
}

// serveSubs applies {"add":[…]} or {"remove":[…]} to the inventory topic.
// A removal drops the queued inventory envelopes once the batch being
// written is done, so after its answer none is written.
func (p *sseProbe) serveSubs(w http.ResponseWriter, r *http.Request) {
	var change struct {
		Add, Remove []struct{ Topic, Cursor string }
	}
	if json.NewDecoder(r.Body).Decode(&change) != nil {
		http.Error(w, `{"error":"invalid JSON body"}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	s := p.byID[r.PathValue("id")]
	if s != nil && len(change.Remove) > 0 {
		s.inv = false // no new inventory envelope is queued for s
	}
	p.mu.Unlock()
	if s == nil {
		http.Error(w, `{"error":"unknown stream"}`, http.StatusNotFound)
		return
	}
	if len(change.Remove) > 0 {
		s.sendMu.Lock()
		s.mu.Lock()
		kept := s.queue[:0]
		for _, env := range s.queue {
			if !bytes.Contains(env, []byte(`"topic":"inventory"`)) {
				kept = append(kept, env)
			}
		}
		s.queue = kept
		s.mu.Unlock()
		s.sendMu.Unlock()
	}
	p.mu.Lock()
	for _, add := range change.Add {
		p.joinLocked(s, add.Cursor)
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true}` + "\n"))
}

// publish sends every follower of topic one envelope of data (activity
// when data is nil: working's new value).
func (p *sseProbe) publish(working bool, data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	seq, topic := &p.actSeq, "activity"
	if data == nil {
		p.working, data = working, activityData(working)
	} else {
		seq, topic, p.latest = &p.invSeq, "inventory", data
	}
	*seq++
	env := envelopeBytes(p.ws, topic, *seq, "data", data)
	for _, s := range p.byID {
		if (topic == "activity" && s.activity) || (topic == "inventory" && s.inv) {
			s.push(env)
		}
	}
}

// liveTap wraps a live server's handler to see, server side, what the
// client cannot: an inventory envelope written to a stream after a POST
// removing that subscription answered 200 and before the next addition
// reached the handler (W5); and when the handler of the stream tagged
// bench=slow returned, which ends it (W7). A write costs an atomic load.
type liveTap struct {
	next      http.Handler
	removed   sync.Map // stream id → *atomic.Bool
	late      atomic.Int64
	slowEnded atomic.Int64 // sinceEpoch when the slow stream's handler returned; 0 before
}

func (t *liveTap) wrap(h http.Handler) http.Handler { t.next = h; return t }

func (t *liveTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tw := &tapWriter{ResponseWriter: w, t: t, status: http.StatusOK, stream: r.Method == http.MethodGet && r.URL.Path == "/api/hub/live"}
	id, isSub := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/hub/live/"), "/subscriptions")
	if !tw.stream && !(isSub && r.Method == http.MethodPost) {
		t.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	r.Body = io.NopCloser(bytes.NewReader(body))
	v, _ := t.removed.Load(id)
	removed, _ := v.(*atomic.Bool)
	if removed != nil && bytes.HasPrefix(body, []byte(`{"add"`)) {
		removed.Store(false)
	}
	if t.next.ServeHTTP(tw, r); removed != nil && tw.status == http.StatusOK && bytes.HasPrefix(body, []byte(`{"remove"`)) {
		removed.Store(true)
	}
	if tw.stream && r.URL.Query().Get("bench") == "slow" {
		t.slowEnded.Store(int64(sinceEpoch()))
	}
	t.removed.Delete(tw.id)
}

// tapWriter learns a stream's id from its hello and checks its writes; it
// records the status of other answers.
type tapWriter struct {
	http.ResponseWriter
	t       *liveTap
	stream  bool
	id      string
	removed *atomic.Bool
	status  int
}

func (w *tapWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *tapWriter) Write(p []byte) (int, error) {
	if id := jsonString(p, "streamId"); w.stream && w.removed == nil && id != nil {
		w.id, w.removed = string(id), &atomic.Bool{}
		w.t.removed.Store(w.id, w.removed)
	} else if w.removed != nil && w.removed.Load() && bytes.Contains(p, []byte(`"topic":"inventory"`)) {
		w.t.late.Add(1)
	}
	return w.ResponseWriter.Write(p)
}

// clientMemory is the load generator's own share of a stream: the
// process's growth per stream with n streams open on a null server, which
// answers each opening from its accepting goroutine and holds the bare
// socket.
func clientMemory(n int) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	body := ": open\n\nevent: hello\ndata: {\"streamId\":\"null\"}\n\n"
	opening := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			c.Write(opening)
			held = append(held, c)
		}
	}()
	m0, ctx := takeMem(), context.Background()
	s, err := openStreams(ctx, n, func(int) (*liveConn, error) { return dialLive(ctx, ln.Addr().String(), "/", nil, nil) }, func(int, frame) {}, nil)
	m1 := takeMem()
	s.close()
	ln.Close()
	<-done
	for _, c := range held {
		c.Close()
	}
	return perStream(m0.rss, m1.rss, n), err
}

// memSnap is the process's resident memory and the servers' goroutines,
// after a collection that returned what it could to the OS.
type memSnap struct {
	rss     int64
	servers int
}

func takeMem() memSnap {
	debug.FreeOSMemory()
	b, _ := os.ReadFile("/proc/self/status")
	return memSnap{rss: parseVmRSS(string(b)), servers: serverGoroutines()}
}

// serverGoroutines counts the servers' goroutines now.
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for ; n == len(buf); n = runtime.Stack(buf, true) {
		buf = make([]byte, 2*len(buf))
	}
	return countServers(buf[:n])
}

// countServers counts the goroutines of a runtime.Stack(all) dump that
// are the servers': a frame of net/http's server or of Wharf's packages
// in their stack ("created by" lines aside; the benchmark is main).
func countServers(dump []byte) (n int) {
	for g := range bytes.SplitSeq(dump, []byte("\n\n")) {
		for line := range bytes.SplitSeq(g, []byte("\n")) {
			if !bytes.HasPrefix(line, []byte("\t")) && !bytes.HasPrefix(line, []byte("created by ")) && (bytes.Contains(line, []byte("net/http.(*conn).serve(")) ||
				bytes.Contains(line, []byte("net/http.(*connReader).backgroundRead(")) || bytes.Contains(line, []byte("net/http.(*Server).Serve(")) ||
				bytes.Contains(line, []byte("github.com/wharfhub/wharf/"))) {
				n++
				break
			}
		}
	}
	return n
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// perStream is the growth from a to b per stream.
func perStream(a, b int64, n int) float64 {
	if n == 0 || a < 0 || b < 0 {
		return 0
	}
	return float64(b-a) / float64(n)
}
