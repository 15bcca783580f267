package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/hub/live"
)

// The live workloads: one engine (liveRun) and a scenario each.

// scenario is one live workload. Its sides run in turn (the probe, the
// baseline, first), each opening its streams on A and waiting for their
// openings (activity's summaries, inventory's ready, or the hello); after
// lead, topic's publications (activity changes, or ticks numbered in their
// payload) go on at rate for window; during runs beside them (W5's churn,
// W6's reconnects, W7's slow stream), and ends the window but activity's.
type scenario struct {
	name   string
	sides  []side
	topic  string // "activity", "inventory" or "" (no subscription)
	rate   int
	window func(c config) time.Duration
	lead   time.Duration
	mem    bool // memory snapshots before the streams open and at the window's end (W3)
	before func(ctx context.Context, e *env, h *liveHub) error
	setup  func(ctx context.Context, x *liveRun) // before the streams open
	during func(ctx context.Context, e *env, x *liveRun)
	judge  func(h *liveHub, xs []*liveRun) []verdict
}

type side struct {
	server  string
	streams int
}

func both(n int) []side { return []side{{"probe", n}, {"Wharf", n}} }

// liveRun is one side of a scenario. Times are since the epoch; tPub[k-1]
// is publication k's, lat[i*m+k-1] stream i's latency of change k; base is
// the activity cursor's number before change 1.
type liveRun struct {
	t                                        liveTarget
	sc                                       *scenario
	ss                                       *streams
	st                                       []streamState
	m                                        int // publications planned
	tPub                                     []atomic.Int64
	lat                                      []time.Duration
	base, published, complete                atomic.Int64 // published is stored before each publication
	stopPublishing                           context.CancelFunc
	start                                    time.Time
	from, until                              time.Duration // the measured window
	cpu, posts                               run           // posts: W5's POSTs
	mem0, mem1                               memSnap
	heapPeak                                 uint64
	err                                      string
	received, lost, disorder, signals, other int // summed over the streams
	ended, full                              int
	late                                     int64 // envelopes the tap saw written after a removal answered (W5)
	delay                                    summary
	g0, gOpen, gLast, slowTicks              int // the servers' goroutines before the streams, with them (W6), after
	hellos                                   []time.Duration
	lastHello, settled, slowEnded            time.Duration // W6: after the drop, after the close; W7: into the window, -1 never
	slowRead                                 int64
	stopSlow                                 func()
}

// streamState is what a stream's reader saw; since its last (re)join:
// joined, ready read; replayed, a tick before it; bad, a second tick
// before it or a cursor not newer than the last.
type streamState struct {
	opened                                         chan struct{}
	summaries, maxSeq, next, lastSeq               int64 // next: the change expected (from 1); lastSeq: the newest cursor read
	received, lost, disorder, signals, other, late int
	joined, replayed, bad                          bool
	removedAfter                                   atomic.Int64 // W5: ticks published when the last removal answered; -1 subscribed
	cursor                                         atomic.Pointer[string]
	hello                                          time.Duration
	keeps                                          []time.Duration
}

func runScenario(sc *scenario) func(ctx context.Context, e *env) ([]verdict, error) {
	return func(ctx context.Context, e *env) ([]verdict, error) {
		h, err := e.liveGroup(ctx)
		if err == nil && sc.before != nil {
			err = sc.before(ctx, e, h)
		}
		if err != nil {
			return nil, err
		}
		var xs []*liveRun
		for _, sd := range sc.sides {
			xs = append(xs, e.liveRun(ctx, sc, map[string]liveTarget{"probe": h.probe, "Wharf": h.wharf}[sd.server], sd.streams))
		}
		return sc.judge(h, xs), ctx.Err()
	}
}

func (e *env) liveRun(ctx context.Context, sc *scenario, t liveTarget, n int) *liveRun {
	settle(ctx)
	t.released(ctx)
	e.progress("%s: %d streams against %s", sc.name, n, t.name)
	x := &liveRun{t: t, sc: sc, m: int(sc.window(e.cfg).Seconds() * float64(sc.rate)), st: make([]streamState, n), stopSlow: func() {}}
	x.tPub = make([]atomic.Int64, x.m)
	if sc.topic == "activity" { // allocated before the first snapshot: not the streams' memory
		x.lat = make([]time.Duration, n*x.m)
	}
	for i := range x.st {
		x.st[i].opened, x.st[i].next = make(chan struct{}), 1
		x.st[i].removedAfter.Store(-1)
	}
	if x.g0 = serverGoroutines(); sc.mem {
		x.mem0 = takeMem()
	}
	if sc.setup != nil {
		sc.setup(ctx, x)
	}
	ss, err := openStreams(ctx, n, func(i int) (*liveConn, error) { return x.dial(ctx, i, false) }, x.see,
		func(i int, done <-chan struct{}) error {
			return waitFor(ctx, x.st[i].opened, done, time.Now().Add(15*time.Second))
		})
	if x.ss = ss; err != nil {
		ss.close()
		x.stopSlow()
		x.err = "opening: " + err.Error()
		return x
	}
	for i := range x.st {
		x.base.Store(max(x.base.Load(), x.st[i].maxSeq))
	}
	waitUntil(ctx, time.Now().Add(sc.lead))
	x.start = time.Now().Add(100 * time.Millisecond)
	pctx, stopPublishing := context.WithCancel(ctx)
	x.stopPublishing, x.late = stopPublishing, t.tap.late.Load()
	var wg sync.WaitGroup
	wg.Go(func() { x.publish(pctx) })
	m0 := mark()
	x.from = sinceEpoch()
	if sc.during != nil {
		sc.during(ctx, e, x)
	}
	if sc.during == nil || sc.topic == "activity" { // all m changes out: a cut one hides the next run's first
		waitUntil(ctx, x.start.Add(sc.window(e.cfg)+time.Duration(b2i(sc.rate > 0))*time.Second/time.Duration(max(sc.rate, 1))))
	}
	x.stopPublishing()
	for end := time.Now().Add(5 * time.Second); sc.topic == "activity" && x.complete.Load() < int64(n) && time.Now().Before(end); {
		waitUntil(ctx, time.Now().Add(20*time.Millisecond)) // the last changes in flight
	}
	if sc.topic == "inventory" {
		waitUntil(ctx, time.Now().Add(200*time.Millisecond))
	}
	x.cpu.fill(m0, mark(), 0)
	x.until, x.late = sinceEpoch(), t.tap.late.Load()-x.late
	if wg.Wait(); sc.mem {
		x.mem1 = takeMem()
	}
	x.ss.close()
	changes, all := int(x.published.Load()), []time.Duration(nil)
	for i := range x.st {
		s := &x.st[i]
		x.received, x.disorder, x.signals, x.other = x.received+s.received, x.disorder+s.disorder, x.signals+s.signals, x.other+s.other
		if sc.topic == "activity" {
			x.lost += s.lost + changes - int(s.next-1)
			x.full += b2i(s.received == changes && s.lost+s.disorder == 0)
			all = append(all, slices.DeleteFunc(slices.Clone(x.lat[i*x.m:i*x.m+changes]), func(d time.Duration) bool { return d == 0 })...)
		}
	}
	if x.ended, x.delay = int(x.ss.ended.Load()), summarize(all); sc.topic == "activity" && changes < x.m {
		x.err = fmt.Sprintf("stopped after %d of %d changes", changes, x.m)
	}
	e.progress("  p50 %s, p99 %s, %d received, %d lost%s", ms(x.delay.P50), ms(x.delay.P99), x.received, x.lost, errNote(x.err))
	return x
}

// dial opens stream i; a reconnection (W6) carries its last cursor.
func (x *liveRun) dial(ctx context.Context, i int, reconnect bool) (*liveConn, error) {
	subs, extra := "", map[bool]string{true: "&reconnect=1"}[reconnect]
	if x.sc.topic == "inventory" {
		subs = `[{"topic":"inventory"}]`
		if c := x.st[i].cursor.Load(); reconnect && c != nil {
			subs = `[{"topic":"inventory","cursor":` + strconv.Quote(*c) + `}]`
		}
	}
	c, err := dialLive(ctx, x.t.addr, livePath(x.t.ws, x.sc.topic == "activity", subs, extra), x.t.hdr)
	if err == nil {
		if x.st[i].hello = sinceEpoch(); x.sc.topic == "" {
			close(x.st[i].opened)
		}
	}
	return c, err
}

func (x *liveRun) see(i int, f frame) {
	s := &x.st[i]
	if f.comment != nil {
		if string(f.comment) == "keepalive" && len(s.keeps) < 8 {
			s.keeps = append(s.keeps, sinceEpoch())
		}
		return
	}
	v, ok := parseEnvelope(f)
	switch kind := string(v.kind); {
	case !ok || string(v.topic) != x.sc.topic:
		s.other++
	case kind == "resync" || kind == "unavailable":
		s.signals++
	case kind == "ready" && x.sc.topic == "inventory":
		cur := string(v.cursor)
		if s.cursor.Store(&cur); !s.joined {
			s.joined = true
			close(s.opened)
		}
	case kind != "data":
		s.other++
	case x.sc.topic == "inventory":
		k, cur := jsonInt(v.data, "benchSeq"), string(v.cursor)
		ra := s.removedAfter.Load()
		s.bad = s.bad || v.seq <= s.lastSeq || (s.replayed && !s.joined)
		s.disorder, s.late = s.disorder+b2i(v.seq <= s.lastSeq), s.late+b2i(ra >= 0 && k > ra)
		s.received, s.replayed, s.lastSeq = s.received+1, s.replayed || !s.joined, max(s.lastSeq, v.seq)
		s.cursor.Store(&cur)
	case s.summaries < int64(x.t.summaries): // activity's opening
		if s.maxSeq, s.summaries = max(s.maxSeq, v.seq), s.summaries+1; s.summaries == int64(x.t.summaries) {
			close(s.opened)
		}
	default:
		switch k := v.seq - x.base.Load(); {
		case string(v.ws) != x.t.ws || k < 1 || k > int64(x.m):
			s.other++
		case k < s.next:
			s.disorder++
		default:
			s.lost, s.received, s.next = s.lost+int(k-s.next), s.received+1, k+1
			x.lat[i*x.m+int(k)-1] = sinceEpoch() - time.Duration(x.tPub[k-1].Load())
			if s.received == x.m {
				x.complete.Add(1)
			}
		}
	}
}

func (x *liveRun) publish(ctx context.Context) {
	for k := 1; k <= x.m && waitUntil(ctx, x.start.Add(time.Duration(k-1)*time.Second/time.Duration(x.sc.rate))); k++ {
		x.tPub[k-1].Store(int64(sinceEpoch()))
		if x.published.Store(int64(k)); x.sc.topic == "activity" {
			x.t.activity(k%2 == 1)
		} else {
			x.t.tick(x.t.ws, inventoryTick(int64(k), 0))
		}
		heap := []metrics.Sample{{Name: "/gc/heap/live:bytes"}} // W7's bound
		metrics.Read(heap)
		x.heapPeak = max(x.heapPeak, heap[0].Value.Uint64())
	}
}

func (x *liveRun) delivered() bool {
	return x.err == "" && x.published.Load() > 0 && x.full == len(x.st) && x.lost+x.disorder+x.signals+x.other+x.ended == 0
}

func (x *liveRun) delivery() string {
	return fmt.Sprintf("%d/%d streams got all %d changes in order; %d lost, %d out of order, %d resync/unavailable, %d other envelopes, "+
		"%d streams ended early%s", x.full, len(x.st), x.published.Load(), x.lost, x.disorder, x.signals, x.other, x.ended, errNote(x.err))
}

// settle waits (≤ 5 s) for the servers' goroutines to be still for 0.5 s.
func settle(ctx context.Context) {
	last, stable := serverGoroutines(), time.Now()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && time.Since(stable) < 500*time.Millisecond && waitUntil(ctx, time.Now().Add(100*time.Millisecond)); {
		if n := serverGoroutines(); n != last {
			last, stable = n, time.Now()
		}
	}
}

// inventoryTick is the payload of tick n, padded with pad bytes.
func inventoryTick(n int64, pad int) []byte {
	return fmt.Appendf(nil, `{"type":"conversation.inventory","benchSeq":%d,"pad":"%0*d"}`, n, pad, 0)
}

// post removes stream i's subscription (n even) or adds it with its cursor.
func (x *liveRun) post(ctx context.Context, i, n int) (int, error) {
	s, body := &x.st[i], []byte(`{"remove":[{"topic":"inventory"}]}`)
	if n%2 == 1 {
		s.removedAfter.Store(-1) // before sending: what the addition brings is due
		body = append(strconv.AppendQuote([]byte(`{"add":[{"topic":"inventory","cursor":`), *s.cursor.Load()), "}]}"...)
	}
	status, _, _, err := call(ctx, x.t.addr, http.MethodPost, "/api/hub/live/"+x.ss.cs[i].ID+"/subscriptions", x.t.hdr, body, nil)
	if err == nil && status == http.StatusOK && n%2 == 0 {
		s.removedAfter.Store(x.published.Load())
	}
	return status, err
}

const (
	w3Streams, w4Streams             = 1000, 5000
	liveRate                         = 10 // activity changes a second
	w3MaxP50, w3MaxP99, w4MaxP99     = 15 * time.Millisecond, 50 * time.Millisecond, 250 * time.Millisecond
	w3MaxMem                         = 64 << 10 // bytes per stream, server side
	w7HeapSlack                      = 4 << 20  // a batch of the slow stream being written, and slack
	slowRate, slowTick, slowTicks    = 1024, 64 << 10, 10
	slowAfterLimit                   = 35 * time.Second
	w5Streams, w5Changes, w5TickRate = 200, 5, 50
	w5Window, w5MaxP99               = 10 * time.Second, 20 * time.Millisecond
	w6Streams, w6TickRate            = 1000, 10
	w6Spread, w6MaxHello, w6Settle   = 2 * time.Second, 5 * time.Second, 10 * time.Second
	w12Streams, w12MaxCPU            = 1000, 0.02
	keepEvery, keepSlack             = 15 * time.Second, 100 * time.Millisecond
)

// w7Holds is what the Hub lets W7's slow stream hold before its stall
// ends it: live.MaxBacklog, then live.StallTimeout of its ticks.
const (
	w7Holds     = uint64(live.MaxBacklog + int64(live.StallTimeout/time.Second)*slowTick*slowTicks)
	w7HeapBound = w7Holds + uint64(w7HeapSlack)
)

func liveWindow(c config) time.Duration { return c.live }

func vsProbe(w, pr *liveRun, p func(summary) time.Duration) string {
	return fmt.Sprintf("%s (probe %s: %.2f × probe)", ms(p(w.delay)), ms(p(pr.delay)), ratio(float64(p(w.delay)), float64(p(pr.delay))))
}

func p50(s summary) time.Duration { return s.P50 }
func p99(s summary) time.Duration { return s.P99 }

var w3 = &scenario{name: "W3", sides: both(w3Streams), topic: "activity", rate: liveRate, window: liveWindow, mem: true,
	before: func(ctx context.Context, e *env, h *liveHub) (err error) {
		settle(ctx)
		h.clientRSS, err = clientMemory(w3Streams)
		return err
	},
	judge: func(h *liveHub, xs []*liveRun) []verdict {
		p, w := xs[0], xs[1]
		h.w3 = w
		rss, prss := perStream(w.mem0.rss, w.mem1.rss, len(w.st)), perStream(p.mem0.rss, p.mem1.rss, len(p.st))
		gor := func(x *liveRun) float64 { return float64(x.mem1.servers-x.mem0.servers) / float64(len(x.st)) }
		return []verdict{
			{"W3 latency p50, 1000 streams", vsProbe(w, p, p50), "≤ " + ms(w3MaxP50) + " (absolute)", w.delay.N > 0 && w.delay.P50 <= w3MaxP50},
			{"W3 latency p99", vsProbe(w, p, p99), "≤ " + ms(w3MaxP99) + " (absolute)", w.delay.N > 0 && w.delay.P99 <= w3MaxP99},
			{"W3 delivery", w.delivery(), "every change to every stream, in order; no resync", w.delivered()},
			{"W3 memory per stream (RSS, server side)", fmt.Sprintf("%s: the process grew %s per stream, of which the client's own share "+
				"(null server) is %s; probe: %s", kb(rss-h.clientRSS), kb(rss), kb(h.clientRSS), kb(prss-h.clientRSS)),
				"≤ " + kb(w3MaxMem), w.err == "" && rss-h.clientRSS <= w3MaxMem},
			{"W3 goroutines per stream (server side)", fmt.Sprintf("%.2f (the servers' goroutines: %d before the streams, %d with them "+
				"open); probe %.2f", gor(w), w.mem0.servers, w.mem1.servers, gor(p)), "≤ 3", w.err == "" && gor(w) <= 3}}
	}}

var w4 = &scenario{name: "W4", sides: both(w4Streams), topic: "activity", rate: liveRate, window: liveWindow, judge: func(_ *liveHub, xs []*liveRun) []verdict {
	p, w := xs[0], xs[1]
	return []verdict{{"W4 latency p99, 5000 streams", vsProbe(w, p, p99), "≤ " + ms(w4MaxP99) + " (absolute)", w.delay.N > 0 && w.delay.P99 <= w4MaxP99},
		{"W4 streams stay up", w.delivery(), "every stream open to the end and given every change", w.delivered()}}
}}

var w7 = &scenario{name: "W7", sides: []side{{"Wharf", w3Streams - 1}}, topic: "activity", rate: liveRate, window: liveWindow,
	setup: func(ctx context.Context, x *liveRun) { // first: its opening moves the activity cursor
		quit := make(chan struct{})
		slow, err := openStreams(ctx, 1, func(int) (*liveConn, error) {
			return dialLive(ctx, x.t.addr, livePath(x.t.b, true, `[{"topic":"inventory"}]`, "&bench=slow"), x.t.hdr)
		}, func(_ int, f frame) { // reading slowRate bytes a second
			x.slowRead += int64(len(f.data))
			select {
			case <-time.After(time.Duration(len(f.data)) * time.Second / slowRate):
			case <-quit:
			}
		}, nil)
		if x.stopSlow = func() { close(quit); slow.close() }; err != nil {
			x.err = "slow stream: " + err.Error()
		}
	},
	during: func(ctx context.Context, e *env, x *liveRun) {
		defer x.stopSlow()
		for k := 0; k < x.m*slowTicks/liveRate && waitUntil(ctx, x.start.Add(time.Duration(k)*time.Second/slowTicks)); k++ {
			x.slowTicks += b2i(x.t.tick(x.t.b, inventoryTick(int64(k+1), slowTick)))
		}
		// The Hub ends the stream once its backlog passes its bound; its
		// handler returns by its write deadline.
		for end := time.Now().Add(slowAfterLimit); x.t.tap.slowEnded.Load() == 0 && time.Now().Before(end); {
			waitUntil(ctx, time.Now().Add(100*time.Millisecond))
		}
		x.slowEnded = -1
		if at := x.t.tap.slowEnded.Load(); at != 0 {
			x.slowEnded = time.Duration(at) - x.start.Sub(benchEpoch)
		}
	},
	judge: func(h *liveHub, xs []*liveRun) []verdict {
		w, base := xs[0], h.w3
		limit := time.Duration(1.2 * float64(base.delay.P99))
		return []verdict{
			{"W7 the 999 others' p99", fmt.Sprintf("%s = %.2f × W3's %s", ms(w.delay.P99), ratio(float64(w.delay.P99), float64(base.delay.P99)),
				ms(base.delay.P99)), fmt.Sprintf("≤ 1.2 × W3's p99 (%s)", ms(limit)), base.delay.N > 0 && w.delay.N > 0 && w.delay.P99 <= limit},
			{"W7 the others' delivery", w.delivery(), "every change to every stream, in order", w.delivered()},
			{"W7 the slow stream", fmt.Sprintf("the Hub ended it (its handler returned) %s into the window; B got %d ticks of %s, its client "+
				"read %s; peak live heap %s (W3's %s)%s", secs(w.slowEnded), w.slowTicks, kb(slowTick), kb(float64(w.slowRead)), mib(w.heapPeak),
				mib(base.heapPeak), errNote(w.err)), fmt.Sprintf("ended once > 1 MiB held and %s without progress; peak live heap < W3's + %s "+
				"(what it may hold: 1 MiB and that long of its ticks, %s, and %s)", secs(live.StallTimeout), mib(w7HeapBound), mib(w7Holds), mib(w7HeapSlack)),
				w.err == "" && w.slowEnded >= 0 && int64(w.heapPeak)-int64(base.heapPeak) < int64(w7HeapBound)}}
	}}

var w5 = &scenario{name: "W5", sides: both(w5Streams), topic: "inventory", rate: w5TickRate, window: func(c config) time.Duration { return c.warmup + w5Window },
	during: func(ctx context.Context, e *env, x *liveRun) {
		x.posts = e.loop(ctx, len(x.st), w5Window, time.Second/w5Changes, x.post)
	},
	judge: func(_ *liveHub, xs []*liveRun) []verdict {
		p, w := xs[0].posts, xs[1]
		r, clientLate := w.posts, 0
		for i := range w.st {
			clientLate += w.st[i].late
		}
		ok := w.err == "" && r.Lat.N > 0
		return []verdict{
			{"W5 subscription POST p99, 200 streams × 5/s", fmt.Sprintf("%s over %d POSTs (p50 %s); probe %s: %.2f × probe", ms(r.Lat.P99),
				r.Lat.N, ms(r.Lat.P50), ms(p.Lat.P99), ratio(float64(r.Lat.P99), float64(p.Lat.P99))), "≤ " + ms(w5MaxP99) + " (absolute)",
				ok && r.Lat.P99 <= w5MaxP99},
			{"W5 POST answers", fmt.Sprintf("%d non-200, %d errors%s", r.Non200, r.Errors, errNote(w.err)), "0 non-200, 0 errors", ok && r.Non200+r.Errors == 0},
			{"W5 no envelope of a removed subscription", fmt.Sprintf("%d written after the removal answered (server side), %d ticks published "+
				"after it read before the next addition (client side); %d inventory envelopes read, %d streams ended early", w.late, clientLate,
				w.received, w.ended), "0 and 0", ok && int(w.late)+clientLate+w.ended == 0 && w.received > 0}}
	}}

var w6 = &scenario{name: "W6", sides: both(w6Streams), topic: "inventory",
	rate: w6TickRate, window: func(config) time.Duration { return w6Spread + w6MaxHello + 5*time.Second },
	during: func(ctx context.Context, e *env, x *liveRun) {
		waitUntil(ctx, time.Now().Add(time.Second))
		drop, re := time.Now(), newStreams(len(x.st))
		x.ss.close()
		var wg sync.WaitGroup
		for i := range x.st {
			s := &x.st[i]
			s.joined, s.replayed, s.opened = false, false, make(chan struct{})
			wg.Go(func() {
				if waitUntil(ctx, drop.Add(time.Duration(i)*w6Spread/time.Duration(len(x.st)))) {
					if c, err := x.dial(ctx, i, true); err == nil { // a failure shows in the count of hellos
						re.start(i, c, x.see)
					}
				}
			})
		}
		wg.Wait()
		x.ss = re
		helloBy := time.Now().Add(w6MaxHello) // one deadline for every stream
		for i, c := range re.cs {
			if c != nil {
				x.hellos, x.lastHello = append(x.hellos, c.Hello), max(x.lastHello, x.st[i].hello-drop.Sub(benchEpoch))
				waitFor(ctx, x.st[i].opened, re.done[i], helloBy)
			}
		}
		waitUntil(ctx, time.Now().Add(2*time.Second))
		x.gOpen = serverGoroutines()
		x.stopPublishing()
		re.close()
		x.gLast, x.settled = x.gOpen, -1
		for closed := time.Now(); time.Since(closed) <= w6Settle && waitUntil(ctx, time.Now().Add(100*time.Millisecond)); {
			if x.gLast = serverGoroutines(); x.gLast <= x.g0 {
				x.settled = time.Since(closed)
				break
			}
		}
	},
	judge: func(_ *liveHub, xs []*liveRun) []verdict {
		p, w := summarize(xs[0].hellos), xs[1]
		hello, replayed, atHead, bad, noReady := summarize(w.hellos), 0, 0, 0, 0
		for i := range w.st {
			s := &w.st[i]
			replayed, atHead, bad = replayed+b2i(s.joined && s.replayed), atHead+b2i(s.joined && !s.replayed), bad+b2i(s.bad)
			noReady += b2i(!s.joined)
		}
		return []verdict{
			{"W6 `: open` and hello after the drop", fmt.Sprintf("%d/%d reconnected; hello p50 %s, p99 %s, max %s from each dial; the last hello "+
				"%s after the drop (probe: hello p99 %s, %.2f × probe)%s", hello.N, w6Streams, ms(hello.P50), ms(hello.P99), ms(hello.Max),
				ms(w.lastHello), ms(p.P99), ratio(float64(hello.P99), float64(p.P99)), errNote(w.err)), "all within " + secs(w6MaxHello),
				w.err == "" && hello.N == w6Streams && hello.Max <= w6MaxHello},
			{"W6 replay before live", fmt.Sprintf("%d joins replayed the latest tick then ready, %d were at the head (ready only); %d out of "+
				"order, %d without ready, %d unavailable/resync", replayed, atHead, bad, noReady, w.signals), "every join: replay, ready, then newer ticks",
				replayed+atHead == w6Streams && bad+noReady+w.signals == 0},
			{"W6 goroutines back to baseline", fmt.Sprintf("after %s (the servers' goroutines: %d before, %d with the streams open, %d at the "+
				"last count)", secs(w.settled), w.g0, w.gOpen, w.gLast), "within " + secs(w6Settle) + " of the close", w.settled >= 0 && w.settled <= w6Settle}}
	}}

// W12 runs without streams and with them: the CPU over -w12-idle + 1 s,
// 1 s after the last opened, when each is owed -w12-idle / 15 s keepalives.
var w12 = &scenario{name: "W12", sides: []side{{"Wharf", 0}, {"Wharf", w12Streams}}, lead: time.Second,
	window: func(c config) time.Duration { return c.w12Idle + time.Second },
	judge: func(_ *liveHub, xs []*liveRun) []verdict {
		base, with := xs[0], xs[1]
		want, exact, gaps := int((with.until-with.from)/keepEvery), 0, []time.Duration(nil)
		for i := range with.st {
			n, prev := 0, with.st[i].hello
			for _, k := range with.st[i].keeps {
				gaps, prev, n = append(gaps, k-prev), k, n+b2i(k >= with.from && k <= with.until)
			}
			exact += b2i(n == want)
		}
		iv, rate := summarize(gaps), func(x *liveRun) float64 { return x.cpu.Server.Seconds() / (x.until - x.from).Seconds() }
		share := rate(with) - rate(base)
		return []verdict{
			{"W12 keepalives, 1000 idle streams", fmt.Sprintf("%d/%d streams got exactly %d in the %s window; intervals from hello min %s, p50 "+
				"%s, max %s; %d other frames, %d streams ended%s", exact, w12Streams, want, secs(with.until-with.from), secs(percentile(gaps, 0)),
				secs(iv.P50), secs(iv.Max), with.other, with.ended, errNote(with.err)), "one each per 15 s (intervals 15 s − 0.1 s to 16 s)",
				with.err == "" && want > 0 && exact == w12Streams && percentile(gaps, 0) >= keepEvery-keepSlack && iv.Max < keepEvery+time.Second && with.ended == 0},
			{"W12 CPU of the idle streams", fmt.Sprintf("%.2f %% of one core (%.2f %% with them, %.2f %% without; other processes: %s, %s)",
				100*share, 100*rate(with), 100*rate(base), pct(with.cpu.Others), pct(base.cpu.Others)), fmt.Sprintf("< %.0f %% of one core",
				100*w12MaxCPU), share < w12MaxCPU}}
	}}
