package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// W3, W7 and W4: n streams with activity=1 on A, whose activity changes
// liveRate times a second for -live-window; every stream must get every
// change, in order; latency is from the publish to the reader's parse.
const (
	w3Streams, w4Streams = 1000, 5000
	liveRate             = 10
	w3MaxP50, w3MaxP99   = 15 * time.Millisecond, 50 * time.Millisecond
	w4MaxP99             = 250 * time.Millisecond
	w3MaxMem             = 64 << 10 // bytes per stream, server side
	w7HeapSlack          = 4 << 20  // the slow stream's backlog bound, a batch of it being written, and slack
	slowRate, slowTick   = 1024, 64 << 10
	slowTicks            = 10 // B's heavy ticks a second
	slowAfterLimit       = 35 * time.Second
)

type fanResult struct {
	target                                                                           string
	streams, changes, received, lost, disorder, signals, unexpected, ended, complete int
	lat                                                                              summary
	mem0, mem1                                                                       *memSnap
	heapPeak                                                                         uint64
	cpu                                                                              run
	slow                                                                             string // what happened to W7's slow stream
	slowOK                                                                           bool
	err                                                                              string
}

// settle waits (at most 5 s) until the servers' goroutines have not moved
// for half a second: the previous run's connections are gone.
func settle(ctx context.Context) {
	last, stable := serverGoroutines(), time.Now()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end) && time.Since(stable) < 500*time.Millisecond && waitUntil(ctx, time.Now().Add(100*time.Millisecond)); {
		if n := serverGoroutines(); n != last {
			last, stable = n, time.Now()
		}
	}
}

// fanout runs n streams against t; mem takes memory snapshots before the
// streams open and at the window's end; slow adds W7's slow stream.
func (e *env) fanout(ctx context.Context, label string, t liveTarget, n int, mem, slow bool) *fanResult {
	settle(ctx)
	e.progress("%s: %d streams, %d changes/s for %s against %s", label, n, liveRate, e.cfg.liveWindow, t.name)
	m := int(e.cfg.liveWindow.Seconds() * liveRate)
	res := &fanResult{target: t.name, streams: n}
	// What the readers record is allocated before the first snapshot, so
	// it does not count as the streams' memory.
	lat, tPub, opened := make([]time.Duration, n*m), make([]atomic.Int64, m), make([]chan struct{}, n)
	st := make([]struct{ next, maxSeq, seen, received, lost, disorder, signals, unexpected int64 }, n)
	for i := range st {
		st[i].next, opened[i] = 1, make(chan struct{})
	}
	var base, complete atomic.Int64
	if mem {
		s := takeMem()
		res.mem0 = &s
	}
	var slowS *streams
	th := &throttled{}
	if slow { // W7's slow reader: it also follows B's inventory, which only it follows
		path := livePath(t.b, true, `[{"topic":"inventory"}]`, "&bench=slow")
		var err error
		if slowS, err = openStreams(ctx, 1, func(int) (*liveConn, error) {
			return dialLive(ctx, t.addr, path, t.hdr, func(c net.Conn) net.Conn { th.Conn = c; return th })
		}, func(int, frame) {}, nil); err != nil {
			res.err = "slow stream: " + err.Error()
		}
		defer slowS.close()
	}
	on := func(i int, f frame) {
		v, ok := parseEnvelope(f)
		switch s, kind := &st[i], string(v.kind); {
		case f.comment != nil:
		case !ok || string(v.topic) != "activity" || (kind != "data" && kind != "resync" && kind != "unavailable"):
			s.unexpected++
		case kind != "data":
			s.signals++
		case s.seen < int64(t.summaries):
			if s.maxSeq, s.seen = max(s.maxSeq, v.seq), s.seen+1; s.seen == int64(t.summaries) {
				close(opened[i])
			}
		case string(v.ws) != t.ws || v.seq-base.Load() < 1 || v.seq-base.Load() > int64(m):
			s.unexpected++
		case v.seq-base.Load() < s.next:
			s.disorder++
		default:
			k := v.seq - base.Load()
			s.lost, s.received, s.next = s.lost+k-s.next, s.received+1, k+1
			lat[i*m+int(k)-1] = sinceEpoch() - time.Duration(tPub[k-1].Load())
			if s.received == int64(m) {
				complete.Add(1)
			}
		}
	}
	path := livePath(t.ws, true, "", "")
	ss, err := openStreams(ctx, n, func(int) (*liveConn, error) { return dialLive(ctx, t.addr, path, t.hdr, nil) }, on,
		func(i int, done <-chan struct{}) error { return waitFor(opened[i], done, 15*time.Second) })
	defer ss.close()
	if res.err == "" && err != nil {
		res.err = "opening: " + err.Error()
	}
	if res.err != "" {
		return res
	}
	for i := range st {
		base.Store(max(base.Load(), st[i].maxSeq))
	}
	start, stop, sampled := time.Now().Add(100*time.Millisecond), make(chan struct{}), make(chan struct{})
	go func() { // the live heap during the window (W7's bound)
		defer close(sampled)
		for tick := time.NewTicker(250 * time.Millisecond); ; {
			select {
			case <-tick.C:
				res.heapPeak = max(res.heapPeak, liveHeap())
			case <-stop:
				tick.Stop()
				return
			}
		}
	}()
	var wg sync.WaitGroup
	ticks := 0
	if slow {
		wg.Go(func() {
			for k := 0; k < m*slowTicks/liveRate && waitUntil(ctx, start.Add(time.Duration(k)*time.Second/slowTicks)); k++ {
				ticks += b2i(t.tick(t.b, inventoryTick(int64(k+1), slowTick)))
			}
			// The Hub ends the stream once its backlog passes its bound; its
			// handler returns by its write deadline.
			for end := time.Now().Add(slowAfterLimit); t.tap.slowEnded.Load() == 0 && time.Now().Before(end); {
				waitUntil(ctx, time.Now().Add(100*time.Millisecond))
			}
		})
	}
	m0 := mark(nil)
	for k := 1; k <= m && waitUntil(ctx, start.Add(time.Duration(k-1)*time.Second/liveRate)); k++ {
		tPub[k-1].Store(int64(sinceEpoch()))
		t.activity(k%2 == 1)
		res.changes = k
	}
	for end := time.Now().Add(5 * time.Second); complete.Load() < int64(n) && time.Now().Before(end); {
		waitUntil(ctx, time.Now().Add(20*time.Millisecond)) // the last changes in flight
	}
	res.cpu.fill(m0, mark(nil), 0, 0)
	close(stop)
	<-sampled
	if wg.Wait(); mem {
		s := takeMem()
		res.mem1 = &s
	}
	ss.close()
	var all []time.Duration
	for i, s := range st {
		for _, d := range lat[i*m : i*m+res.changes] {
			if d > 0 {
				all = append(all, d)
			}
		}
		res.received, res.disorder, res.signals, res.unexpected = res.received+int(s.received), res.disorder+int(s.disorder), res.signals+int(s.signals), res.unexpected+int(s.unexpected)
		res.lost += int(s.lost) + res.changes - int(s.next-1)
		res.complete += b2i(int(s.received) == res.changes && s.lost+s.disorder == 0)
	}
	if res.ended, res.lat = ss.endedEarly(), summarize(all); slow {
		ended := time.Duration(t.tap.slowEnded.Load()) - start.Sub(benchEpoch)
		if ended = max(ended, -1); t.tap.slowEnded.Load() == 0 {
			ended = -1
		}
		res.slow = fmt.Sprintf("the Hub ended it (its handler returned) %s into the window; B got %d ticks of %s, its client read %s; "+
			"peak live heap %s (W3's %s)", secs(ended), ticks, kb(float64(slowTick)), kb(float64(th.total.Load())), mib(res.heapPeak), mib(e.live.w3.heapPeak))
		res.slowOK = ended >= 0 && int64(res.heapPeak)-int64(e.live.w3.heapPeak) < w7HeapSlack
	}
	if res.changes < m {
		res.err = fmt.Sprintf("stopped after %d of %d changes", res.changes, m)
	}
	e.progress("  p50 %s, p99 %s, %d received, %d lost%s", ms(res.lat.P50), ms(res.lat.P99), res.received, res.lost, errNote(res.err))
	return res
}

func (r *fanResult) delivered() bool {
	return r.err == "" && r.changes > 0 && r.complete == r.streams && r.lost+r.disorder+r.signals+r.unexpected+r.ended == 0
}

func (r *fanResult) delivery() string {
	return fmt.Sprintf("%d/%d streams got all %d changes in order; %d lost, %d out of order, %d resync/unavailable, %d other envelopes, "+
		"%d streams ended early%s", r.complete, r.streams, r.changes, r.lost, r.disorder, r.signals, r.unexpected, r.ended, errNote(r.err))
}

// vsProbe is Wharf's latency (p picks it) with the probe's beside it.
func vsProbe(w, pr *fanResult, p func(summary) time.Duration) string {
	return fmt.Sprintf("%s (probe %s: %.2f × probe)", ms(p(w.lat)), ms(p(pr.lat)), ratio(float64(p(w.lat)), float64(p(pr.lat))))
}

func (r *fanResult) perEnvelope() time.Duration {
	return r.cpu.Server / time.Duration(max(1, r.received))
}

// fanTable is the figures of fan-out runs.
func (h *liveHub) fanTable(label string, rs ...*fanResult) *table {
	t := newTable("run", "streams", "changes", "received", "lost", "out of order", "resync", "ended early", "p50", "p90", "p99", "p99.9", "max",
		"CPU/envelope", "other procs", "RSS growth / stream (server side)", "servers' goroutines before → with the streams")
	for _, r := range rs {
		mem, gor := "—", "—"
		if r.mem0 != nil && r.mem1 != nil {
			rss := perStream(r.mem0.rss, r.mem1.rss, r.streams)
			mem, gor = fmt.Sprintf("%s (%s)", kb(rss), kb(rss-h.clientRSS)), fmt.Sprintf("%d → %d", r.mem0.servers, r.mem1.servers)
		}
		t.add(label+" "+r.target, r.streams, r.changes, r.received, r.lost, r.disorder, r.signals, r.ended, ms(r.lat.P50), ms(r.lat.P90),
			ms(r.lat.P99), ms(r.lat.P999), ms(r.lat.Max), us(r.perEnvelope()), pct(r.cpu.Others), mem, gor)
	}
	return t
}

func runW3(ctx context.Context, e *env) (*section, error) {
	h, err := e.liveGroup(ctx)
	if err == nil {
		settle(ctx)
		e.progress("W3: the load generator's memory per stream (null server)")
		h.clientRSS, err = clientMemory(w3Streams)
	}
	if err != nil {
		return nil, err
	}
	p := e.fanout(ctx, "W3", h.probe, w3Streams, true, false)
	w := e.fanout(ctx, "W3", h.wharf, w3Streams, true, false)
	h.w3 = w
	s := &section{title: "W3: activity fan-out to 1,000 streams", tables: []*table{h.fanTable("W3", p, w)}, text: []string{h.noFile, fmt.Sprintf(
		"Memory: snapshots after `debug.FreeOSMemory` before the streams open and at the window's end; RSS growth is `VmRSS` (both "+
			"sides), less the load generator's own %s per stream (the same client on a null server) for the server side; CPU/envelope "+
			"is the process's CPU (both sides) per envelope received.", kb(h.clientRSS))}}
	s.verdicts = []verdict{
		{"W3 latency p50, 1000 streams", vsProbe(w, p, func(s summary) time.Duration { return s.P50 }), "≤ " + ms(w3MaxP50) + " (absolute)", w.lat.N > 0 && w.lat.P50 <= w3MaxP50},
		{"W3 latency p99", vsProbe(w, p, func(s summary) time.Duration { return s.P99 }), "≤ " + ms(w3MaxP99) + " (absolute)", w.lat.N > 0 && w.lat.P99 <= w3MaxP99},
		{"W3 delivery", w.delivery(), "every change to every stream, in order; no resync", w.delivered()}}
	if w.mem1 != nil && p.mem1 != nil {
		rss, prss := perStream(w.mem0.rss, w.mem1.rss, w.streams), perStream(p.mem0.rss, p.mem1.rss, p.streams)
		gor := func(r *fanResult) float64 { return float64(r.mem1.servers-r.mem0.servers) / float64(r.streams) }
		s.verdicts = append(s.verdicts,
			verdict{"W3 memory per stream (RSS, server side)", fmt.Sprintf("%s: the process grew %s per stream, of which the load generator's "+
				"own share (null server) is %s; probe: %s", kb(rss-h.clientRSS), kb(rss), kb(h.clientRSS), kb(prss-h.clientRSS)),
				"≤ " + kb(w3MaxMem), rss-h.clientRSS <= w3MaxMem},
			verdict{"W3 goroutines per stream (server side)", fmt.Sprintf("%.2f (the servers' goroutines: %d before the streams, %d with them "+
				"open); probe %.2f", gor(w), w.mem0.servers, w.mem1.servers, gor(p)), "≤ 3", gor(w) <= 3})
	}
	s.reading = []string{fmt.Sprintf("Live fan-out: one change is %d envelopes, each its own write on the server and read in the client, "+
		"both in this process; the probe used %s of CPU per envelope delivered and Wharf %s.", w.streams, us(p.perEnvelope()), us(w.perEnvelope()))}
	return s, nil
}

func runW7(ctx context.Context, e *env) (*section, error) {
	h, err := e.liveGroup(ctx)
	if err != nil {
		return nil, err
	}
	if h.w3 == nil {
		h.w3 = e.fanout(ctx, "W7 baseline (W3)", h.wharf, w3Streams, false, false)
	}
	w, base := e.fanout(ctx, "W7", h.wharf, w3Streams-1, false, true), h.w3
	limit := time.Duration(1.2 * float64(base.lat.P99))
	return &section{title: "W7: 999 streams and one reading 1 KB/s", tables: []*table{h.fanTable("W7", w)}, text: []string{fmt.Sprintf("W3 with "+
		"999 streams plus one reading %d B/s (a throttled socket) that also follows B's inventory, which gets a %s tick %d times a "+
		"second that no other stream follows, so it falls behind by more than the Hub's 1 MiB bound within the window. The tap notes "+
		"when its handler returns (the Hub ended it); the live heap is sampled every 250 ms.", slowRate, kb(slowTick), slowTicks)},
		verdicts: []verdict{
			{"W7 the 999 others' p99", fmt.Sprintf("%s = %.2f × W3's %s", ms(w.lat.P99), ratio(float64(w.lat.P99), float64(base.lat.P99)), ms(base.lat.P99)),
				fmt.Sprintf("≤ 1.2 × W3's p99 (%s)", ms(limit)), base.lat.N > 0 && w.lat.N > 0 && w.lat.P99 <= limit},
			{"W7 the others' delivery", w.delivery(), "every change to every stream, in order", w.delivered()},
			{"W7 the slow stream", w.slow + errNote(w.err), fmt.Sprintf("ended once > 1 MiB unsent; peak live heap < W3's + %s", mib(w7HeapSlack)), w.slowOK}}}, nil
}

func runW4(ctx context.Context, e *env) (*section, error) {
	h, err := e.liveGroup(ctx)
	if err != nil {
		return nil, err
	}
	p := e.fanout(ctx, "W4", h.probe, w4Streams, false, false)
	w := e.fanout(ctx, "W4", h.wharf, w4Streams, true, false)
	return &section{title: "W4: activity fan-out to 5,000 streams", tables: []*table{h.fanTable("W4", p, w)}, verdicts: []verdict{
		{"W4 latency p99, 5000 streams", vsProbe(w, p, func(s summary) time.Duration { return s.P99 }), "≤ " + ms(w4MaxP99) + " (absolute)",
			w.lat.N > 0 && w.lat.P99 <= w4MaxP99},
		{"W4 streams stay up", w.delivery(), "every stream open to the end and given every change", w.delivered()}}}, nil
}

// throttled reads at most slowRate bytes a second, in reads of at most a
// quarter of it.
type throttled struct {
	net.Conn
	start time.Time
	total atomic.Int64
}

func (t *throttled) Read(p []byte) (int, error) {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	time.Sleep(time.Duration(float64(t.total.Load())/slowRate*float64(time.Second)) - time.Since(t.start))
	n, err := t.Conn.Read(p[:min(len(p), slowRate/4)])
	t.total.Add(int64(n))
	return n, err
}

// inventoryTick is the payload of tick n, padded with about pad bytes.
func inventoryTick(n int64, pad int) []byte {
	return fmt.Appendf(nil, `{"type":"conversation.inventory","benchSeq":%d,"pad":"%s"}`, n, bytes.Repeat([]byte("x"), pad))
}
