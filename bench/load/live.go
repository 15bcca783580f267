package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// The "live" group: a Wharf whose sessions are fakes.Backend's (the bench
// publishes their activity and inventory) and the SSE probe; the client.

// benchEpoch is the origin of times a publish and a receipt compare by.
var benchEpoch = time.Now()

func sinceEpoch() time.Duration { return time.Since(benchEpoch) }

// liveTarget is a live server: streams open on ws (A), W7's slow one on b;
// activity=1 opens with summaries envelopes; tick is false without an
// upstream; released waits (up to 5 s) until A's inventory one is gone.
type liveTarget struct {
	name, addr, ws, b string
	hdr               http.Header
	summaries         int
	activity          func(working bool)
	tick              func(ws string, data []byte) bool
	released          func(ctx context.Context)
	tap               *liveTap
}

type liveHub struct {
	wharf, probe liveTarget
	backend      *fakes.Backend // Wharf's sessions (W13 publishes a conversation on A's)
	clientRSS    float64        // the client's own memory per stream (clientMemory)
	w3           *liveRun       // W3's Wharf run, W7's reference
}

func (e *env) liveGroup(ctx context.Context) (*liveHub, error) {
	if e.live != nil {
		return e.live, nil
	}
	backend, tap, ids := fakes.NewBackend(), &liveTap{}, []string(nil)
	w, err := e.openWharf(ctx, func(p *service.Ports) { p.Backend = backend }, tap.wrap)
	a, errA := mkTemp(e, "wharf-bench-live-a")
	b, errB := mkTemp(e, "wharf-bench-live-b")
	if err = cmp.Or(err, errA, errB); err == nil {
		ids, err = w.register(ctx, a, b)
	}
	for _, id := range ids { // A and B, started; the Hub watches each one's activity
		if err == nil {
			err = w.lifecycle(ctx, id, "start")
		}
		if err == nil {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = backend.WaitFeed(wctx, id, hub.TopicActivity, "", 1)
			cancel()
		}
	}
	if err != nil {
		return nil, err
	}
	inventory := func(ws string) (f *fakes.Feed) { // the inventory feed of ws the Hub has open, or nil
		if n := backend.FeedOpens(ws, hub.TopicInventory, ""); n > 0 {
			if f, _ = backend.WaitFeed(ctx, ws, hub.TopicInventory, "", n); f != nil && f.IsClosed() {
				f = nil
			}
		}
		return f
	}
	p, ptap := &sseProbe{ws: ids[0], byID: map[string]*probeStream{}}, &liveTap{}
	addr, err := e.serve(w.d, ptap.wrap(p.handler()))
	e.live = &liveHub{backend: backend, probe: liveTarget{name: "probe", addr: addr, ws: ids[0], summaries: 1, tap: ptap, activity: func(working bool) { p.publish(working, nil) },
		tick: func(_ string, data []byte) bool { p.publish(false, data); return true }, released: func(context.Context) {}},
		wharf: liveTarget{name: "Wharf", addr: w.addr, hdr: bearer(w.session), ws: ids[0], b: ids[1], summaries: 2, tap: tap,
			activity: func(working bool) { backend.SetActivity(ids[0], working, false) },
			tick: func(ws string, data []byte) bool {
				f := inventory(ws)
				if f != nil {
					f.Send(hub.FeedFrame{Kind: hub.FrameData, Data: data})
				}
				return f != nil
			},
			released: func(ctx context.Context) {
				for end := time.Now().Add(5 * time.Second); inventory(ids[0]) != nil && time.Now().Before(end); {
					waitUntil(ctx, time.Now().Add(50*time.Millisecond))
				}
			}}}
	return e.live, err
}

// frame is a comment or an event; its slices are valid until the next read.
type frame struct{ comment, event, data []byte }

// liveConn is one open live stream, a raw TCP connection: its id, and the
// time from its dial to its hello.
type liveConn struct {
	conn              net.Conn
	br                *bufio.Reader
	long, ev, dat, cm []byte
	ID                string
	Hello             time.Duration
}

// livePath is a stream's path: subs is a JSON array ("" none).
func livePath(ws string, activity bool, subs, extra string) string {
	if subs != "" {
		extra = "&subs=" + url.QueryEscape(subs) + extra
	}
	return "/api/hub/live?ws=" + ws + map[bool]string{true: "&activity=1"}[activity] + extra
}

// dialLive opens a stream and reads its opening (`: open`, hello) within 15 s.
func dialLive(ctx context.Context, addr, path string, hdr http.Header) (*liveConn, error) {
	t0 := time.Now()
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(t0.Add(15 * time.Second))
	c, req := &liveConn{conn: conn}, &http.Request{}
	if req, err = http.NewRequest(http.MethodGet, "http://"+addr+path, nil); err == nil {
		req.Header = hdr
	}
	var resp *http.Response
	var open, hello frame
	if err == nil {
		err = req.Write(conn)
	}
	if err == nil {
		resp, err = http.ReadResponse(bufio.NewReaderSize(conn, 4096), req)
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		err = fmt.Errorf("live stream: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if err == nil {
		c.br = bufio.NewReaderSize(resp.Body, 4096)
		if open, err = c.next(); err == nil {
			open.comment = bytes.Clone(open.comment)
			hello, err = c.next()
		}
	}
	if c.ID = string(jsonString(hello.data, "streamId")); err == nil && (string(open.comment) != "open" || string(hello.event) != "hello" || c.ID == "") {
		err = fmt.Errorf("live stream: opening %q, %q %q", open.comment, hello.event, hello.data)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	c.Hello = time.Since(t0)
	return c, conn.SetDeadline(time.Time{})
}

// next reads up to the blank line that ends a frame.
func (c *liveConn) next() (frame, error) {
	c.ev, c.dat, c.cm = c.ev[:0], c.dat[:0], c.cm[:0]
	for isComment, any := false, false; ; {
		l, err := c.br.ReadSlice('\n')
		for c.long = c.long[:0]; errors.Is(err, bufio.ErrBufferFull); l, err = c.br.ReadSlice('\n') {
			c.long = append(c.long, l...)
		}
		if err != nil {
			return frame{}, err
		}
		switch l = append(c.long, l[:len(l)-1]...); {
		case len(l) == 0 && !any:
		case len(l) == 0 && isComment:
			return frame{comment: c.cm}, nil
		case len(l) == 0:
			return frame{event: c.ev, data: c.dat}, nil
		case l[0] == ':':
			isComment, c.cm = true, append(c.cm, bytes.TrimPrefix(l[1:], []byte(" "))...)
		case bytes.HasPrefix(l, []byte("event: ")):
			c.ev = append(c.ev, l[7:]...)
		case bytes.HasPrefix(l, []byte("data: ")):
			c.dat = append(c.dat, l[6:]...)
		}
		any = any || len(l) > 0
	}
}

// liveEnv is what the workloads read of a LiveEnvelope; its slices point
// into the frame; seq is the cursor's number after its last '.', -1 none.
type liveEnv struct {
	ws, topic, cursor, kind, data []byte
	seq                           int64
}

// parseEnvelope reads a LiveEnvelope written the Hub's way (payload last).
func parseEnvelope(f frame) (liveEnv, bool) {
	b := f.data
	e := liveEnv{ws: jsonString(b, "ws"), topic: jsonString(b, "topic"), cursor: jsonString(b, "cursor"), kind: jsonString(b, "kind"), seq: -1}
	_, rest, ok := bytes.Cut(b, []byte(`"event":{"kind":"`))
	if f.comment != nil || e.ws == nil || e.topic == nil || e.cursor == nil || !ok {
		return e, false
	}
	if d, ok := bytes.CutPrefix(rest[len(e.kind)+1:], []byte(`,"data":`)); ok {
		if !bytes.HasSuffix(d, []byte("}}")) {
			return e, false
		}
		e.data = d[:len(d)-2]
	}
	if n, err := strconv.ParseInt(string(e.cursor[bytes.LastIndexByte(e.cursor, '.')+1:]), 10, 64); err == nil {
		e.seq = n
	}
	return e, true
}

// jsonString is the first string member name of b, not unescaped, or nil.
func jsonString(b []byte, name string) []byte {
	_, rest, ok := bytes.Cut(b, []byte(`"`+name+`":"`))
	if j := bytes.IndexByte(rest, '"'); ok && j >= 0 {
		return rest[:j]
	}
	return nil
}

// jsonInt is the value of the first integer member name of b, or -1.
func jsonInt(b []byte, name string) int64 {
	_, rest, _ := bytes.Cut(b, []byte(`"`+name+`":`))
	n, err := strconv.ParseInt(string(rest[:len(rest)-len(bytes.TrimLeft(rest, "0123456789"))]), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// streams is a set of live streams, each read by its own goroutine;
// ended counts those that ended before the benchmark closed them.
type streams struct {
	cs      []*liveConn
	done    []chan struct{}
	ended   atomic.Int64
	closing atomic.Bool
}

func newStreams(n int) *streams {
	return &streams{cs: make([]*liveConn, n), done: make([]chan struct{}, n)}
}

func (s *streams) start(i int, c *liveConn, on func(i int, f frame)) {
	s.cs[i], s.done[i] = c, make(chan struct{})
	go func() {
		defer close(s.done[i])
		for f, err := c.next(); ; f, err = c.next() {
			if err != nil {
				s.ended.Add(int64(b2i(!s.closing.Load())))
				return
			}
			on(i, f)
		}
	}()
}

// openStreams dials n streams, 64 at a time, each then waiting in opened, if
// set, for its opening; the first error stops. Close the set in any case.
func openStreams(ctx context.Context, n int, dial func(i int) (*liveConn, error), on func(i int, f frame),
	opened func(i int, done <-chan struct{}) error) (*streams, error) {
	s, sem, errs := newStreams(n), make(chan struct{}, 64), make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n && ctx.Err() == nil && len(errs) == 0; i++ {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := dial(i)
			if err == nil {
				if s.start(i, c, on); opened != nil {
					err = opened(i, s.done[i])
				}
			}
			if err != nil {
				errs <- fmt.Errorf("stream %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return s, cmp.Or(<-errs, ctx.Err())
}

func (s *streams) close() {
	s.closing.Store(true)
	for i, c := range s.cs {
		if c != nil {
			c.conn.Close()
			<-s.done[i]
		}
	}
}

// waitFor waits for ch until deadline, the stream's end or ctx's.
// Callers waiting on many streams share one deadline, so the wait is
// bounded whatever the count.
func waitFor(ctx context.Context, ch, done <-chan struct{}, deadline time.Time) error {
	select {
	case <-ch:
		return nil
	case <-done:
		return errors.New("the stream ended while opening")
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(deadline)):
		return errors.New("timed out while opening")
	}
}

// sseProbe is the live baseline, a minimal fan-out: a handler per stream
// draining its queue (256 envelopes), each envelope encoded once, in
// Wharf's field order. It knows activity (with an opening summary) and
// inventory (a join: the latest tick unless the cursor is the head, then
// `ready`; a removal answers once no batch holding removed envelopes is
// being written, and what was queued before it is never written).
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
	gen           atomic.Int64 // the inventory subscription's generation: a removal ends one
	sendMu        sync.Mutex   // held while a batch is written
	queue         chan probeEnv
}

// probeEnv is a queued envelope; gen is -1 for activity.
type probeEnv struct {
	gen int64
	b   []byte
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

func (s *probeStream) push(gen int64, b []byte) {
	select {
	case s.queue <- probeEnv{gen, b}:
	default:
	}
}

// joinLocked owes s the latest tick (unless cursor is the head), then
// ready; p.mu is held.
func (p *sseProbe) joinLocked(s *probeStream, cursor string) {
	if s.inv = true; cursor != "probe."+strconv.FormatInt(p.invSeq, 10) && p.latest != nil {
		s.push(s.gen.Load(), envelopeBytes(p.ws, "inventory", p.invSeq, "data", p.latest))
	}
	s.push(s.gen.Load(), envelopeBytes(p.ws, "inventory", p.invSeq, "ready", nil))
}

func (p *sseProbe) serveLive(w http.ResponseWriter, r *http.Request) {
	var subs []struct{ Topic, Cursor string }
	json.Unmarshal([]byte(r.URL.Query().Get("subs")), &subs)
	s, id, rc := &probeStream{queue: make(chan probeEnv, 256)}, fmt.Sprintf("p%p", r), http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	if w.Write([]byte(": open\n\nevent: hello\ndata: {\"streamId\":\"" + id + "\"}\n\n")); rc.Flush() != nil {
		return
	}
	p.mu.Lock()
	if p.byID[id], s.activity = s, r.URL.Query().Get("activity") == "1"; s.activity { // the summary Wharf opens activity with
		s.push(-1, envelopeBytes(p.ws, "activity", p.actSeq, "data", activityData(p.working)))
	}
	for _, sub := range subs {
		if sub.Topic == "inventory" {
			p.joinLocked(s, sub.Cursor)
		}
	}
	p.mu.Unlock()
	defer func() { p.mu.Lock(); delete(p.byID, id); p.mu.Unlock() }()
	var buf []byte
	for err := error(nil); err == nil; {
		var env probeEnv
		select {
		case env = <-s.queue:
		case <-r.Context().Done():
			return
		}
		s.sendMu.Lock()
		for more := true; more; {
			if env.gen < 0 || env.gen == s.gen.Load() {
				buf = append(append(append(buf, "event: live\ndata: "...), env.b...), "\n\n"...)
			}
			select {
			case env = <-s.queue:
			default:
				more = false
			}
		}
		if _, err = w.Write(buf); err == nil {
			err = rc.Flush()
		}
		buf = buf[:0]
		s.sendMu.Unlock()
	}
}

// serveSubs applies {"add":[…]} or {"remove":[…]} to the inventory topic.
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
		s.inv = false
	}
	p.mu.Unlock()
	if s == nil {
		http.Error(w, `{"error":"unknown stream"}`, http.StatusNotFound)
		return
	} else if len(change.Remove) > 0 { // once the batch being written is done, nothing queued before is written
		s.sendMu.Lock()
		s.gen.Add(1)
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

// publish sends every follower an activity change (data nil) or a tick.
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
		if topic == "inventory" && s.inv {
			s.push(s.gen.Load(), env)
		} else if topic == "activity" && s.activity {
			s.push(-1, env)
		}
	}
}

// liveTap sees, server side: an inventory envelope written to a stream after
// a removal answered 200 and before the next addition reached the handler
// (W5); when the handler of the stream tagged bench=slow returned (W7).
type liveTap struct {
	next            http.Handler
	removed         sync.Map     // stream id → *atomic.Bool
	late, slowEnded atomic.Int64 // slowEnded: since the epoch, 0 before
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
	if removed, _ := v.(*atomic.Bool); removed == nil {
		t.next.ServeHTTP(tw, r)
	} else if bytes.HasPrefix(body, []byte(`{"add"`)) {
		removed.Store(false)
		t.next.ServeHTTP(tw, r)
	} else if t.next.ServeHTTP(tw, r); tw.status == http.StatusOK && bytes.HasPrefix(body, []byte(`{"remove"`)) {
		removed.Store(true)
	}
	if tw.stream && r.URL.Query().Get("bench") == "slow" {
		t.slowEnded.Store(int64(sinceEpoch()))
	}
	t.removed.Delete(tw.id)
}

// tapWriter learns a stream's id from its hello and checks its writes.
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

// clientMemory is the growth per stream with n streams open on a null
// server answering each opening and holding the socket: the client's share.
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
	s, err := openStreams(ctx, n, func(int) (*liveConn, error) { return dialLive(ctx, ln.Addr().String(), "/", nil) }, func(int, frame) {}, nil)
	m1 := takeMem()
	s.close()
	ln.Close()
	<-done
	for _, c := range held {
		c.Close()
	}
	return perStream(m0.rss, m1.rss, n), err
}

// memSnap is the resident memory and the servers' goroutines after a GC.
type memSnap struct {
	rss     int64
	servers int
}

func takeMem() memSnap {
	debug.FreeOSMemory()
	b, _ := os.ReadFile("/proc/self/status")
	_, v, _ := strings.Cut(string(b), "\nVmRSS:")
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(strings.SplitN(v, "\n", 2)[0]), " kB"), 10, 64)
	if err != nil {
		kb = -1 << 20
	}
	return memSnap{kb << 10, serverGoroutines()}
}

func perStream(a, b int64, n int) float64 {
	if n == 0 || a < 0 || b < 0 {
		return 0
	}
	return float64(b-a) / float64(n)
}

// serverGoroutines counts the goroutines with a frame of net/http's
// server or of Wharf's packages ("created by" aside; the bench is main).
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	for ; n == len(buf); n = runtime.Stack(buf, true) {
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for g := range bytes.SplitSeq(buf[:n], []byte("\n\n")) {
		for line := range bytes.SplitSeq(g, []byte("\n")) {
			if !bytes.HasPrefix(line, []byte("\t")) && !bytes.HasPrefix(line, []byte("created by ")) && (bytes.Contains(line, []byte("net/http.(*conn).serve(")) ||
				bytes.Contains(line, []byte("net/http.(*connReader).backgroundRead(")) || bytes.Contains(line, []byte("net/http.(*Server).Serve(")) ||
				bytes.Contains(line, []byte("github.com/wharfhub/wharf/"))) {
				count++
				break
			}
		}
	}
	return count
}
