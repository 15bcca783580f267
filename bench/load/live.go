package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// The "live" group: a Wharf whose sessions are fakes.Backend's (so the
// benchmark makes them report activity and send inventory ticks) and the
// SSE probe, each behind a tap; and the streams' client: one raw TCP
// connection per stream (http.ReadResponse decodes the chunked body), read
// by one goroutine.

// benchEpoch is the origin of the live workloads' times, so that a
// publish and a receipt in different goroutines compare.
var benchEpoch = time.Now()

func sinceEpoch() time.Duration { return time.Since(benchEpoch) }

// liveTarget is a live server as the workloads drive it: streams open on
// workspace ws (A); W7's slow stream follows b's inventory (Wharf only); a
// stream with activity=1 opens with summaries envelopes; tick reports
// false when there was no upstream to send to; released waits (up to 5 s)
// until A's inventory upstream is gone.
type liveTarget struct {
	name, addr, ws, b string
	hdr               http.Header
	summaries         int
	activity          func(working bool)
	tick              func(ws string, data []byte) bool
	tap               *liveTap
	released          func(ctx context.Context)
}

// liveHub is the group's targets and what its workloads share.
type liveHub struct {
	wharf, probe liveTarget
	clientRSS    float64    // the load generator's own memory per stream (clientMemory)
	w3           *fanResult // W3's Wharf run, W7's reference
	noFile       string
}

func (e *env) liveGroup(ctx context.Context) (*liveHub, error) {
	if e.live != nil {
		return e.live, nil
	}
	soft, hard, err := raiseNoFile(2*w4Streams + 1024)
	h := &liveHub{noFile: fmt.Sprintf("Open-file limit: soft %d, hard %d (W4 needs two per stream)%s.", soft, hard, errNote(fmt.Sprint(err)))}
	backend, tap, ids := fakes.NewBackend(), &liveTap{}, []string(nil)
	w, err := e.openWharf(ctx, func(p *hub.Ports) { p.Backend = backend }, tap.wrap)
	for _, name := range []string{"a", "b"} { // A and B, started; the Hub watches each one's activity
		var dir string
		if err == nil {
			dir, err = mkTemp(e, "wharf-bench-live-"+name)
		}
		var id []string
		if err == nil {
			id, err = w.register(ctx, []string{dir})
			ids = append(ids, id...)
		}
		if err == nil {
			err = w.lifecycle(ctx, ids[len(ids)-1], "start")
		}
		if err == nil {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err = backend.WaitFeed(wctx, ids[len(ids)-1], hub.TopicActivity, "", 1)
			cancel()
		}
	}
	if err != nil {
		return nil, err
	}
	inventory := func(ws string) *fakes.Feed { // the inventory feed of ws the Hub has open, or nil
		if n := backend.FeedOpens(ws, hub.TopicInventory, ""); n > 0 {
			if f, err := backend.WaitFeed(ctx, ws, hub.TopicInventory, "", n); err == nil && !f.IsClosed() {
				return f
			}
		}
		return nil
	}
	h.wharf = liveTarget{name: "Wharf", addr: w.addr, hdr: bearer(w.session), ws: ids[0], b: ids[1], summaries: 2, tap: tap,
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
		}}
	p, ptap := &sseProbe{ws: ids[0], byID: map[string]*probeStream{}}, &liveTap{}
	srv, err := e.serve(w.d, ptap.wrap(p.handler()))
	h.probe = liveTarget{name: "probe", addr: srv.addr, hdr: http.Header{}, ws: ids[0], summaries: 1, tap: ptap,
		activity: func(working bool) { p.publish(working, nil) },
		tick:     func(_ string, data []byte) bool { p.publish(false, data); return true }, released: func(context.Context) {}}
	e.live = h
	return h, err
}

// frame is one frame of an event stream, a comment or an event; its
// slices are valid until the next read.
type frame struct{ comment, event, data []byte }

// liveConn is one open live stream: its id, and the time from its dial to
// its hello.
type liveConn struct {
	conn              net.Conn
	br                *bufio.Reader
	long, ev, dat, cm []byte
	ID                string
	Hello             time.Duration
}

// livePath is a stream's request path and query.
func livePath(ws string, activity bool, subs, extra string) string {
	if subs != "" {
		extra = "&subs=" + url.QueryEscape(subs) + extra
	}
	return "/api/hub/live?ws=" + ws + map[bool]string{true: "&activity=1"}[activity] + extra
}

// dialLive opens a stream and reads its opening (`: open`, then hello)
// within 15 s; wrap, when set, wraps the connection (W7's throttle).
func dialLive(ctx context.Context, addr, path string, hdr http.Header, wrap func(net.Conn) net.Conn) (*liveConn, error) {
	t0 := time.Now()
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(t0.Add(15 * time.Second))
	c, rc := &liveConn{conn: conn}, conn
	if wrap != nil {
		rc = wrap(conn)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	req.Header = hdr
	var resp *http.Response
	var open, hello frame
	if err = req.Write(conn); err == nil {
		resp, err = http.ReadResponse(bufio.NewReaderSize(rc, 4096), req)
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

// next reads up to the blank line that ends a frame; a line longer than
// the buffer is assembled.
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
		l = append(c.long, l...)
		switch l = l[:len(l)-1]; {
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
	ws, topic, cursor, kind, epoch, data []byte
	seq                                  int64
}

// parseEnvelope reads a frame as a LiveEnvelope written the Hub's way
// (ws, topic, key, cursor, event; the payload last); false otherwise.
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
	e.epoch, e.seq = splitCursor(e.cursor)
	return e, true
}

// splitCursor is a cursor's epoch (up to its last '.') and number.
func splitCursor(c []byte) ([]byte, int64) {
	i := bytes.LastIndexByte(c, '.')
	if n, err := strconv.ParseInt(string(c[i+1:]), 10, 64); i >= 0 && err == nil {
		return c[:i], n
	}
	return nil, -1
}

// jsonString is the value of the first string member name of b, not
// unescaped, or nil: for envelopes and payloads without escaped quotes.
func jsonString(b []byte, name string) []byte {
	_, rest, ok := bytes.Cut(b, []byte(`"`+name+`":"`))
	if j := bytes.IndexByte(rest, '"'); ok && j >= 0 {
		return rest[:j]
	}
	return nil
}

// streams is a set of live streams, each read by its own goroutine
// handing every frame to a workload's function; ended marks those that
// ended before the benchmark closed them.
type streams struct {
	cs      []*liveConn
	done    []chan struct{}
	ended   []bool
	closing atomic.Bool
}

func newStreams(n int) *streams {
	return &streams{cs: make([]*liveConn, n), done: make([]chan struct{}, n), ended: make([]bool, n)}
}

// start makes c stream i, read by its own goroutine calling on.
func (s *streams) start(i int, c *liveConn, on func(i int, f frame)) {
	s.cs[i], s.done[i] = c, make(chan struct{})
	go func() {
		defer close(s.done[i])
		for {
			f, err := c.next()
			if err != nil {
				s.ended[i] = !s.closing.Load()
				return
			}
			on(i, f)
		}
	}()
}

// openStreams opens n streams, 64 at a time: dial(i), start, then, when
// set, opened(i, done) waits until the opening is complete (done closes
// when the stream ends). The first error stops the opening; close the set
// in any case.
func openStreams(ctx context.Context, n int, dial func(i int) (*liveConn, error), on func(i int, f frame),
	opened func(i int, done <-chan struct{}) error) (*streams, error) {
	s, sem := newStreams(n), make(chan struct{}, 64)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for i := 0; i < n && ctx.Err() == nil; i++ {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
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
				mu.Lock()
				first = cmp.Or(first, fmt.Errorf("stream %d: %w", i, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return s, cmp.Or(first, ctx.Err())
}

// close closes every stream and waits for its reader; endedEarly is then
// the count of those that ended before.
func (s *streams) close() {
	s.closing.Store(true)
	for i, c := range s.cs {
		if c != nil {
			c.conn.Close()
			<-s.done[i]
		}
	}
}

func (s *streams) endedEarly() (n int) {
	for _, e := range s.ended {
		n += b2i(e)
	}
	return n
}

// waitFor waits up to limit for ch, or until the stream ends.
func waitFor(ch, done <-chan struct{}, limit time.Duration) error {
	select {
	case <-ch:
		return nil
	case <-done:
		return errors.New("the stream ended while opening")
	case <-time.After(limit):
		return errors.New("timed out while opening")
	}
}
