package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// W5: subscription changes while events flow; W6: every stream dropped
// and reconnected with its cursor; W12: idle streams.
const (
	w5Streams, w5Changes, w5TickRate = 200, 5, 50
	w5Window, w5MaxP99               = 10 * time.Second, 20 * time.Millisecond
	w6Streams, w6TickRate            = 1000, 10
	w6Spread, w6MaxHello, w6Settle   = 2 * time.Second, 5 * time.Second, 10 * time.Second
	w12Streams, w12MaxCPU            = 1000, 0.02
	keepEvery, keepSlack             = 15 * time.Second, 100 * time.Millisecond
)

// ticker publishes inventory ticks on t's A, rate a second, until ctx
// ends; published counts them, stored before each send, so a tick
// numbered above a count taken after an answer was sent after it.
func ticker(ctx context.Context, t liveTarget, rate int, published *atomic.Int64) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for n, start := int64(1), time.Now(); waitUntil(ctx, start.Add(time.Duration(n-1)*time.Second/time.Duration(rate))); n++ {
			published.Store(n)
			t.tick(t.ws, inventoryTick(n, 0))
		}
	})
	return func() { cancel(); wg.Wait() }
}

// inventory reads a frame as an envelope of the inventory topic.
func inventory(f frame) (liveEnv, bool) {
	v, ok := parseEnvelope(f)
	return v, ok && string(v.topic) == "inventory"
}

// onBoth runs f against the probe, then Wharf, each once the previous
// run's connections are gone and A's inventory upstream is released.
func onBoth(ctx context.Context, h *liveHub, f func(t liveTarget)) {
	for _, t := range []liveTarget{h.probe, h.wharf} {
		settle(ctx)
		t.released(ctx)
		f(t)
	}
}

// runW5 opens 200 streams on A's inventory (ticking 50 times a second)
// and has each remove and add the subscription in turn, 5 times a second,
// each POST sent on schedule (open loop). Late: server side (the tap), an
// inventory envelope written after a removal answered and before the next
// addition reached the handler; client side, a tick published after a
// removal answered and read before the next addition was sent.
func runW5(ctx context.Context, e *env) (*section, error) {
	h, err := e.liveGroup(ctx)
	if err != nil {
		return nil, err
	}
	tb := newTable("server", "POSTs", "p50", "p90", "p99", "p99.9", "max", "non-200 / errors", "ticks", "inventory envelopes read",
		"late (server side)", "late (client side)", "streams ended early", "CPU", "other procs")
	var probeP99 time.Duration
	s := &section{title: "W5: subscription changes while events flow", tables: []*table{tb}, text: []string{fmt.Sprintf("%d streams on "+
		"A's inventory, which ticks %d times a second; each removes and adds the subscription in turn, %d times a second (an addition "+
		"carrying its last cursor), over a shared keep-alive client, each POST sent on schedule (latency from it); %s warm-up, %s "+
		"measured. Late, server side: an inventory envelope the tap saw written after a removal's handler answered 200 and before the "+
		"next addition reached it; client side: a tick published after a removal answered, read before the next addition was sent.",
		w5Streams, w5TickRate, w5Changes, e.cfg.warmup, secs(w5Window))}}
	onBoth(ctx, h, func(t liveTarget) {
		e.progress("W5: %d streams, %d subscription changes/s each, against %s", w5Streams, w5Changes, t.name)
		// removedAfter: ticks published when the last removal answered, -1
		// while subscribed.
		removedAfter, cursor, ready := make([]atomic.Int64, w5Streams), make([]atomic.Pointer[string], w5Streams), make([]chan struct{}, w5Streams)
		lates, invs := make([]int, w5Streams), make([]int, w5Streams)
		for i := range ready {
			ready[i] = make(chan struct{})
			removedAfter[i].Store(-1)
		}
		path := livePath(t.ws, false, `[{"topic":"inventory"}]`, "")
		ss, err := openStreams(ctx, w5Streams, func(int) (*liveConn, error) { return dialLive(ctx, t.addr, path, t.hdr, nil) }, func(i int, f frame) {
			if v, ok := inventory(f); ok {
				cur, ra := string(v.cursor), removedAfter[i].Load()
				cursor[i].Store(&cur)
				switch string(v.kind) {
				case "ready":
					select {
					case <-ready[i]:
					default:
						close(ready[i])
					}
				case "data":
					invs[i], lates[i] = invs[i]+1, lates[i]+b2i(ra >= 0 && jsonInt(v.data, "benchSeq") > ra)
				}
			}
		}, func(i int, done <-chan struct{}) error { return waitFor(ready[i], done, 15*time.Second) })
		defer ss.close()
		var published atomic.Int64
		late0, stopTicks := t.tap.late.Load(), ticker(ctx, t, w5TickRate, &published)
		r := run{Err: errNote(fmt.Sprint(err))}
		if err == nil {
			r = e.measure(ctx, target{pace: time.Second / w5Changes, call: func(ctx context.Context, i, n int) (int, error) {
				body := []byte(`{"remove":[{"topic":"inventory"}]}`)
				if n%2 == 1 {
					removedAfter[i].Store(-1) // before sending: what the addition brings is due
					body = append(strconv.AppendQuote([]byte(`{"add":[{"topic":"inventory","cursor":`), *cursor[i].Load()), "}]}"...)
				}
				status, _, _, err := call(ctx, t.addr, http.MethodPost, "/api/hub/live/"+ss.cs[i].ID+"/subscriptions", t.hdr, body, nil)
				if err == nil && status == http.StatusOK && n%2 == 0 {
					removedAfter[i].Store(published.Load())
				}
				return status, err
			}}, w5Streams, w5Window, nil)
		}
		stopTicks()
		waitUntil(ctx, time.Now().Add(200*time.Millisecond)) // the last envelopes in flight
		ss.close()
		late, clientLate, inv := int(t.tap.late.Load()-late0), 0, 0
		for i := range w5Streams {
			clientLate, inv = clientLate+lates[i], inv+invs[i]
		}
		tb.add(t.name, r.OK, ms(r.Lat.P50), ms(r.Lat.P90), ms(r.Lat.P99), ms(r.Lat.P999), ms(r.Lat.Max), fmt.Sprintf("%d / %d", r.Non200, r.Errors),
			published.Load(), inv, late, clientLate, ss.endedEarly(), secs(r.Server), pct(r.Others))
		if t.name == "probe" {
			probeP99 = r.Lat.P99
			return
		}
		ok := r.Err == "" && r.Lat.N > 0
		s.verdicts = []verdict{
			{"W5 subscription POST p99, 200 streams × 5/s", fmt.Sprintf("%s over %d POSTs (p50 %s); probe %s: %.2f × probe%s", ms(r.Lat.P99),
				r.OK, ms(r.Lat.P50), ms(probeP99), ratio(float64(r.Lat.P99), float64(probeP99)), r.Err), "≤ " + ms(w5MaxP99) + " (absolute)",
				ok && r.Lat.P99 <= w5MaxP99},
			{"W5 POST answers", fmt.Sprintf("%d non-200, %d errors", r.Non200, r.Errors), "0 non-200, 0 errors", ok && r.Non200+r.Errors == 0},
			{"W5 no envelope of a removed subscription", fmt.Sprintf("%d written after the removal answered (server side), %d ticks published "+
				"after it read before the next addition (client side); %d inventory envelopes read, %d streams ended early", late, clientLate,
				inv, ss.endedEarly()), "0 and 0", ok && late+clientLate+ss.endedEarly() == 0 && inv > 0}}
	})
	return s, err
}

// jsonInt is the value of the first integer member name of b, or -1.
func jsonInt(b []byte, name string) int64 {
	_, rest, _ := bytes.Cut(b, []byte(`"`+name+`":`))
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if n, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
		return n
	}
	return -1
}

// w6State is what one stream of W6 saw.
type w6State struct {
	cursor, old, last     []byte // the last inventory cursor read; the one it reconnected with; the last tick's
	joined, replayed, bad bool
	signals, live         int
	ready                 chan struct{}
}

// see follows an inventory subscription: at most one tick (the replay,
// newer than the old cursor) before ready, then ticks whose cursors only
// go forward.
func (s *w6State) see(f frame) {
	v, ok := inventory(f)
	if !ok {
		return
	}
	back := func(c []byte) bool { e, n := splitCursor(c); return bytes.Equal(v.epoch, e) && v.seq <= n }
	switch s.cursor = append(s.cursor[:0], v.cursor...); string(v.kind) {
	case "ready":
		if !s.joined {
			s.joined = true
			close(s.ready)
		}
	case "data":
		if s.joined {
			s.live, s.bad = s.live+1, s.bad || back(s.last)
		} else {
			s.replayed, s.bad = true, s.bad || s.replayed || back(s.old) // a second tick before ready: live before the replay ended
		}
		s.last = append(s.last[:0], v.cursor...)
	default:
		s.signals++
	}
}

// runW6 opens 1,000 streams on A's inventory (ticking 10 times a second
// throughout), closes them all at once, reconnects stream i at i × 2 ms
// with reconnect=1 and its cursor, keeps them 2 s and closes them; then
// counts the servers' goroutines every 100 ms until they are back to
// their count before the first stream.
func runW6(ctx context.Context, e *env) (*section, error) {
	h, err := e.liveGroup(ctx)
	if err != nil {
		return nil, err
	}
	tb := newTable("server", "reconnected", "hello p50 / p99 / max", "last hello after the drop", "replayed + ready", "ready only",
		"out of order", "no ready", "resync", "goroutines before / open / last", "back to baseline after")
	s := &section{title: "W6: every stream dropped and reconnected with its cursor", tables: []*table{tb}, text: []string{"Each reconnected " +
		"stream must get `: open` and hello within 5 s, then its join (the latest tick when its cursor is behind, then `ready`) " +
		"before any newer tick, cursors only going forward. A's inventory upstream outlives its last subscriber by 3 s by design."}}
	var probeP99 time.Duration
	onBoth(ctx, h, func(t liveTarget) {
		settle(ctx)
		e.progress("W6: %d streams dropped and reconnected within %s, against %s", w6Streams, w6Spread, t.name)
		first, second, g0, settled := make([]w6State, w6Streams), make([]w6State, w6Streams), serverGoroutines(), time.Duration(-1)
		for i := range first {
			first[i].ready, second[i].ready = make(chan struct{}), make(chan struct{})
		}
		var published atomic.Int64
		stopTicks := ticker(ctx, t, w6TickRate, &published)
		dial := func(cursor []byte, extra string) (*liveConn, error) {
			subs := `[{"topic":"inventory"` + map[bool]string{true: `,"cursor":` + strconv.Quote(string(cursor))}[cursor != nil] + `}]`
			return dialLive(ctx, t.addr, livePath(t.ws, false, subs, extra), t.hdr, nil)
		}
		ss, err := openStreams(ctx, w6Streams, func(i int) (*liveConn, error) { return dial(nil, "") }, func(i int, f frame) { first[i].see(f) },
			func(i int, done <-chan struct{}) error { return waitFor(first[i].ready, done, 15*time.Second) })
		waitUntil(ctx, time.Now().Add(time.Second)) // live ticks move every cursor on
		drop, re, errText := time.Now(), newStreams(w6Streams), errNote(fmt.Sprint(err))
		ss.close()
		var mu sync.Mutex
		var wg sync.WaitGroup
		var hellos []time.Duration
		var lastHello time.Duration
		for i := 0; i < w6Streams && err == nil; i++ {
			wg.Go(func() {
				if !waitUntil(ctx, drop.Add(time.Duration(i)*w6Spread/w6Streams)) {
					return
				}
				second[i].old = first[i].cursor
				c, err := dial(first[i].cursor, "&reconnect=1")
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errText = "; a reconnect failed: " + err.Error()
					return
				}
				re.start(i, c, func(i int, f frame) { second[i].see(f) })
				hellos, lastHello = append(hellos, c.Hello), max(lastHello, time.Since(drop))
			})
		}
		wg.Wait()
		for i := range second {
			if re.cs[i] != nil {
				waitFor(second[i].ready, re.done[i], w6MaxHello)
			}
		}
		waitUntil(ctx, time.Now().Add(2*time.Second))
		hello, gOpen := summarize(hellos), serverGoroutines()
		stopTicks()
		re.close()
		gLast := gOpen
		for closed := time.Now(); time.Since(closed) <= w6Settle && waitUntil(ctx, time.Now().Add(100*time.Millisecond)); {
			if gLast = serverGoroutines(); gLast <= g0 {
				settled = time.Since(closed)
				break
			}
		}
		var replayed, atHead, bad, noReady, signals, liveAfter int
		for _, x := range second {
			replayed, atHead, bad = replayed+b2i(x.joined && x.replayed), atHead+b2i(x.joined && !x.replayed), bad+b2i(x.bad)
			noReady, signals, liveAfter = noReady+b2i(!x.joined), signals+x.signals, liveAfter+b2i(x.live > 0)
		}
		tb.add(t.name, hello.N, fmt.Sprintf("%s / %s / %s", ms(hello.P50), ms(hello.P99), ms(hello.Max)), ms(lastHello), replayed, atHead, bad,
			noReady, signals, fmt.Sprintf("%d / %d / %d", g0, gOpen, gLast), secs(settled))
		if t.name == "probe" {
			probeP99 = hello.P99
			return
		}
		s.verdicts = []verdict{
			{"W6 `: open` and hello after the drop", fmt.Sprintf("%d/%d reconnected; hello p50 %s, p99 %s, max %s from each dial; the last hello "+
				"%s after the drop (probe: hello p99 %s, %.2f × probe)%s", hello.N, w6Streams, ms(hello.P50), ms(hello.P99), ms(hello.Max),
				ms(lastHello), ms(probeP99), ratio(float64(hello.P99), float64(probeP99)), errText), "all within " + secs(w6MaxHello),
				errText == "" && hello.N == w6Streams && hello.Max <= w6MaxHello},
			{"W6 replay before live", fmt.Sprintf("%d joins replayed the latest tick then ready, %d were at the head (ready only); %d out of "+
				"order, %d without ready, %d unavailable/resync; %d streams got live ticks after", replayed, atHead, bad, noReady, signals,
				liveAfter), "every join: replay, ready, then newer ticks", replayed+atHead == w6Streams && bad+noReady+signals == 0},
			{"W6 goroutines back to baseline", fmt.Sprintf("after %s (the servers' goroutines: %d before, %d with the streams open, %d at the "+
				"last count)", secs(settled), g0, gOpen, gLast), "within " + secs(w6Settle) + " of the close", settled >= 0 && settled <= w6Settle}}
	})
	return s, err
}

// runW12 measures the process's CPU over -w12-idle with no stream, then
// with 1,000 idle streams (no subscription) over one second more,
// starting 1 s after the last opened: a window in which each stream is
// owed exactly idle/15 s keepalives. The figure is the difference of the
// two rates, on the real clock.
func runW12(ctx context.Context, e *env) (*section, error) {
	h, err := e.liveGroup(ctx)
	if err != nil {
		return nil, err
	}
	t, idle := h.wharf, e.cfg.w12Idle
	settle(ctx)
	t.released(ctx)
	measure := func(d time.Duration) (r run) {
		m0 := mark(nil)
		waitUntil(ctx, time.Now().Add(d))
		r.fill(m0, mark(nil), 0, 0)
		return r
	}
	e.progress("W12: %s idle with no stream, then %d idle streams", idle, w12Streams)
	base := measure(idle)
	hello, keeps := make([]time.Duration, w12Streams), make([][]time.Duration, w12Streams)
	var other atomic.Int64
	ss, err := openStreams(ctx, w12Streams, func(i int) (*liveConn, error) {
		c, err := dialLive(ctx, t.addr, livePath(t.ws, false, "", ""), t.hdr, nil)
		hello[i] = sinceEpoch()
		return c, err
	}, func(i int, f frame) {
		if string(f.comment) == "keepalive" && len(keeps[i]) < 8 {
			keeps[i] = append(keeps[i], sinceEpoch())
		} else {
			other.Add(1)
		}
	}, nil)
	defer ss.close()
	waitUntil(ctx, time.Now().Add(time.Second))
	from := sinceEpoch()
	with := measure(idle + time.Second)
	until := sinceEpoch()
	ss.close()
	want, exact := int(idle/keepEvery), 0
	var gaps []time.Duration
	for i := range w12Streams {
		n, prev := 0, hello[i]
		for _, k := range keeps[i] {
			gaps, prev, n = append(gaps, k-prev), k, n+b2i(k >= from && k <= until)
		}
		exact += b2i(n == want)
	}
	iv := summarize(gaps)
	share := with.Server.Seconds()/(idle+time.Second).Seconds() - base.Server.Seconds()/idle.Seconds()
	return &section{title: "W12: idle streams", text: []string{fmt.Sprintf("Other processes used %s of the machine without the streams and %s with them.",
		pct(base.Others), pct(with.Others))}, verdicts: []verdict{
		{"W12 keepalives, 1000 idle streams", fmt.Sprintf("%d/%d streams got exactly %d in the %s window; intervals from hello min %s, p50 %s, "+
			"max %s; %d other frames, %d streams ended%s", exact, w12Streams, want, secs(idle+time.Second), secs(percentile(gaps, 0)), secs(iv.P50),
			secs(iv.Max), other.Load(), ss.endedEarly(), errNote(fmt.Sprint(err))), "one each per 15 s (intervals 15 s − 0.1 s to 16 s)",
			err == nil && want > 0 && exact == w12Streams && percentile(gaps, 0) >= keepEvery-keepSlack && iv.Max < keepEvery+time.Second && ss.endedEarly() == 0},
		{"W12 CPU of the idle streams", fmt.Sprintf("%.2f %% of one core (%s over %s with them, %s over %s without)", 100*share, secs(with.Server),
			secs(idle+time.Second), secs(base.Server), secs(idle)), fmt.Sprintf("< %.0f %% of one core", 100*w12MaxCPU), share < w12MaxCPU}}}, nil
}
