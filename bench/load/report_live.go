package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// This file judges and writes the live workloads (W3–W7, W12).

func kb(x float64) string { return fmt.Sprintf("%.1f KB", x/1024) }

func mib(x uint64) string { return fmt.Sprintf("%.1f MiB", float64(x)/(1<<20)) }

func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// memPerStream is a fan-out run's growth per stream: the process's RSS,
// the same less the load generator's own share, and the servers'
// goroutines.
func (l *liveReport) memPerStream(r *fanoutResult) (rss, server, gor float64, ok bool) {
	if r == nil || r.Mem0 == nil || r.Mem1 == nil || r.Streams == 0 {
		return 0, 0, 0, false
	}
	rss = perStream(r.Mem0.RSS, r.Mem1.RSS, r.Streams)
	gor = float64(r.Mem1.Server-r.Mem0.Server) / float64(r.Streams)
	return rss, rss - l.ClientRSS, gor, true
}

// delivered says whether every stream got every change in order.
func (r *fanoutResult) delivered() bool {
	return r != nil && r.Err == "" && r.Changes > 0 && r.Complete == r.Streams && r.Lost == 0 && r.Disorder == 0 &&
		r.Signals == 0 && r.Unexpected == 0 && r.Ended == 0
}

func (r *fanoutResult) deliveryFigure() string {
	if r == nil {
		return "not run"
	}
	return fmt.Sprintf("%d/%d streams got all %d changes in order; %d lost, %d out of order, %d resync/unavailable, "+
		"%d other envelopes, %d streams ended early%s", r.Complete, r.Streams, r.Changes, r.Lost, r.Disorder, r.Signals,
		r.Unexpected, r.Ended, errNote(r.Err))
}

func latFigure(w, p *fanoutResult, pick func(summary) time.Duration) string {
	s := ms(pick(w.Lat))
	if p != nil && p.Lat.N > 0 {
		s += fmt.Sprintf(" (probe %s: %.2f × probe)", ms(pick(p.Lat)), ratio(float64(pick(w.Lat)), float64(pick(p.Lat))))
	}
	return s
}

func latP50(s summary) time.Duration { return s.P50 }
func latP99(s summary) time.Duration { return s.P99 }

func (l *liveReport) verdicts() []verdict {
	var vs []verdict
	if w := l.W3; w != nil {
		vs = append(vs,
			verdict{"W3 latency p50, 1000 streams", latFigure(w, l.W3Probe, latP50), "≤ " + ms(w3MaxP50) + " (absolute)", w.Lat.N > 0 && w.Lat.P50 <= w3MaxP50},
			verdict{"W3 latency p99", latFigure(w, l.W3Probe, latP99), "≤ " + ms(w3MaxP99) + " (absolute)", w.Lat.N > 0 && w.Lat.P99 <= w3MaxP99},
			verdict{"W3 delivery", w.deliveryFigure(), "every change to every stream, in order; no resync", w.delivered()})
		if rss, server, gor, ok := l.memPerStream(w); ok {
			fig := fmt.Sprintf("%s of memory per stream: the process grew %s per stream, of which the load generator's own share "+
				"(measured on the null server) is %s", kb(server), kb(rss), kb(l.ClientRSS))
			if prss, pserver, _, ok := l.memPerStream(l.W3Probe); ok {
				fig += fmt.Sprintf("; probe: %s (%s − %s)", kb(pserver), kb(prss), kb(l.ClientRSS))
			}
			vs = append(vs, verdict{"W3 memory per stream (RSS, server side)", fig, fmt.Sprintf("≤ %s", kb(w3MaxMem)), server <= w3MaxMem})
			gfig := fmt.Sprintf("%.2f (the servers' goroutines: %d before the streams, %d with them open)", gor, w.Mem0.Server, w.Mem1.Server)
			if _, _, pg, ok := l.memPerStream(l.W3Probe); ok {
				gfig += fmt.Sprintf("; probe %.2f", pg)
			}
			vs = append(vs, verdict{"W3 goroutines per stream (server side)", gfig, fmt.Sprintf("≤ %.0f", w3MaxGorout), gor <= w3MaxGorout})
		}
	}
	if w := l.W7; w != nil {
		base := l.w3Ref()
		limit := time.Duration(w7MaxFactor * float64(base.Lat.P99))
		vs = append(vs,
			verdict{"W7 the 999 others' p99", fmt.Sprintf("%s = %.2f × W3's %s", ms(w.Lat.P99), ratio(float64(w.Lat.P99), float64(base.Lat.P99)), ms(base.Lat.P99)),
				fmt.Sprintf("≤ %.1f × W3's p99 (%s)", w7MaxFactor, ms(limit)), base.Lat.N > 0 && w.Lat.N > 0 && w.Lat.P99 <= limit},
			verdict{"W7 the others' delivery", w.deliveryFigure(), "every change to every stream, in order", w.delivered()})
		if s := w.Slow; s != nil {
			grew := int64(w.HeapPeak) - int64(base.HeapPeak)
			ok := s.HubEnded >= 0 && grew < w7HeapSlack
			vs = append(vs, verdict{"W7 the slow stream",
				fmt.Sprintf("%s; %s; peak live heap %s (W3's %s)", s.endedFigure(), s.handlerFigure(), mib(w.HeapPeak), mib(base.HeapPeak)),
				fmt.Sprintf("ended once > 1 MiB unsent; peak live heap < W3's + %s", mib(w7HeapSlack)), ok})
		}
	}
	if w := l.W4; w != nil {
		vs = append(vs,
			verdict{"W4 latency p99, 5000 streams", latFigure(w, l.W4Probe, latP99), "≤ " + ms(w4MaxP99) + " (absolute)", w.Lat.N > 0 && w.Lat.P99 <= w4MaxP99},
			verdict{"W4 streams stay up", w.deliveryFigure(), "every stream open to the end and given every change", w.delivered()})
	}
	if w := l.W5; w != nil {
		fig := fmt.Sprintf("%s over %d POSTs (p50 %s)", ms(w.Lat.P99), w.Posts, ms(w.Lat.P50))
		if p := l.W5Probe; p != nil && p.Lat.N > 0 {
			fig += fmt.Sprintf("; probe %s: %.2f × probe", ms(p.Lat.P99), ratio(float64(w.Lat.P99), float64(p.Lat.P99)))
		}
		vs = append(vs,
			verdict{"W5 subscription POST p99, 200 streams × 5/s", fig + errNote(w.Err), "≤ " + ms(w5MaxP99) + " (absolute)", w.Err == "" && w.Lat.N > 0 && w.Lat.P99 <= w5MaxP99},
			verdict{"W5 POST answers", fmt.Sprintf("%d non-200, %d errors", w.Non200, w.Errors), "0 non-200, 0 errors", w.Posts > 0 && w.Non200 == 0 && w.Errors == 0},
			verdict{"W5 no envelope of a removed subscription",
				fmt.Sprintf("%d written after the removal answered (server side), %d ticks published after it read before the next addition "+
					"(client side); %d inventory envelopes read, %d streams ended early", w.ServerLate, w.ClientLate, w.InvReceived, w.Ended),
				"0 and 0", w.Err == "" && w.ServerLate == 0 && w.ClientLate == 0 && w.InvReceived > 0 && w.Ended == 0})
	}
	if w := l.W6; w != nil {
		fig := fmt.Sprintf("%d/%d reconnected; hello p50 %s, p99 %s, max %s from each dial; the last hello %s after the drop",
			w.Reconnected, w.Streams, ms(w.Hello.P50), ms(w.Hello.P99), ms(w.Hello.Max), ms(w.HelloMax))
		if p := l.W6Probe; p != nil && p.Hello.N > 0 {
			fig += fmt.Sprintf(" (probe: hello p99 %s, %.2f × probe)", ms(p.Hello.P99), ratio(float64(w.Hello.P99), float64(p.Hello.P99)))
		}
		vs = append(vs,
			verdict{"W6 `: open` and hello after the drop", fig + errNote(w.Err), "all within " + secs(w6MaxHello),
				w.Err == "" && w.Reconnected == w.Streams && w.Hello.Max <= w6MaxHello},
			verdict{"W6 replay before live", fmt.Sprintf("%d joins replayed the latest tick then ready, %d were at the head (ready only); "+
				"%d out of order, %d without ready, %d unavailable/resync; %d streams got live ticks after",
				w.Replayed, w.AtHead, w.BadOrder, w.NoReady, w.Signals, w.LiveAfter),
				"every join: replay, ready, then newer ticks", w.Replayed+w.AtHead == w.Streams && w.BadOrder == 0 && w.NoReady == 0 && w.Signals == 0},
			verdict{"W6 goroutines back to baseline", fmt.Sprintf("after %s (the servers' goroutines: %d before, %d with the streams open, %d at the last count)",
				secs(w.Settled), w.G0, w.GOpen, w.GLast), "within " + secs(w6Settle) + " of the close", w.Settled >= 0 && w.Settled <= w6Settle})
	}
	if w := l.W12; w != nil {
		vs = append(vs,
			verdict{"W12 keepalives, 1000 idle streams", fmt.Sprintf("%d/%d streams got exactly %d in the %s window; intervals min %s, p50 %s, max %s; "+
				"%d other frames, %d streams ended%s", w.Exact, w.Streams, w.Expected, secs(w.Window), secs(w.IntervalMin), secs(w.Intervals.P50),
				secs(w.Intervals.Max), w.Envelopes, w.Ended, errNote(w.Err)), "one each per 15 s (intervals 15 s − 0.1 s to 16 s)",
				w.Err == "" && w.Exact == w.Streams && w.IntervalMin >= keepEvery-keepSlack && w.Intervals.Max < keepEvery+time.Second && w.Ended == 0},
			verdict{"W12 CPU of the idle streams", fmt.Sprintf("%.2f %% of one core (%.2f %% over %s with them − %.2f %% over %s without)",
				100*w.Share(), 100*w.CPU.Seconds()/w.Window.Seconds(), secs(w.Window), 100*w.IdleCPU.Seconds()/w.IdleWindow.Seconds(), secs(w.IdleWindow)),
				fmt.Sprintf("< %.0f %% of one core", 100*w12MaxCPU), !math.IsNaN(w.Share()) && w.Share() < w12MaxCPU})
	}
	return vs
}

// w7HeapSlack is how much more live heap than W3's the slow stream may
// cause: its backlog bound, a batch of that size being written, and slack.
const w7HeapSlack = 4 << 20

// cpuPerEnvelope is a fan-out run's process CPU per envelope delivered.
func (r *fanoutResult) cpuPerEnvelope() time.Duration {
	if r.Received == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Received)
}

func (b *mdWriter) fanRow(label string, r *fanoutResult) {
	if r == nil {
		return
	}
	b.p("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", label, r.Target, r.Streams, r.Changes,
		r.Received, r.Lost, r.Disorder, r.Signals, r.Ended, ms(r.Lat.P50), ms(r.Lat.P90), ms(r.Lat.P99), ms(r.Lat.P999), ms(r.Lat.Max),
		secs(r.OpenTook), us(r.cpuPerEnvelope()), pct(r.Others))
}

func (l *liveReport) markdown(b *mdWriter) {
	p := b.p
	p("## Live stream (W3–W7, W12)\n\n")
	p("A third Wharf serves the live workloads: the real `hub.Hub` over `adapters/sqlite`, `adapters/osfs` and `adapters/gitexec`, " +
		"the real `httpapi` handler on a loopback listener, but `fakes.Backend` for the workspace sessions, so the benchmark can " +
		"make a running session report activity (`SetActivity`, which the Hub's own activity watch reads) and send inventory ticks " +
		"(`Feed.Send` on the inventory feed the Hub opened). Two workspaces are registered through the API (real folders the Hub " +
		"`git init`s) and started: A, which every stream opens on, and B, whose inventory only W7's slow stream follows. " +
		"Every stream is bearer-authenticated with one login. The client reads each stream on its own TCP connection, parsing " +
		"the chunked body with `http.ReadResponse` (one goroutine per stream, no client transport).\n\n")
	p("The **live probe** is the baseline, in the same process on its own listener: a `net/http` handler per stream that writes " +
		"`: open` and hello, then waits on a queue; the publisher encodes each envelope once, in Wharf's field order and shape, and " +
		"appends it to every follower's queue; it knows the activity topic and the inventory topic (with the join a reconnect " +
		"needs and Wharf's guarantee that a removal answers only once no batch holding the removed envelopes is being written), and " +
		"nothing else: no authentication, broker, backlog bound, keepalive or store. Latency is from the publish (just before " +
		"`SetActivity` or the probe's publish) to the moment the stream's reader has parsed the envelope, on one monotonic clock. " +
		"Both servers are served through the same tap (a wrapper of the handler that watches, server side, what W5 and W7 need).\n\n")
	if l.NoFileErr != "" {
		p("Raising the open-file limit failed: %s. ", l.NoFileErr)
	}
	p("Open-file limit during the live workloads: soft %d, hard %d (W4 needs two descriptors per stream, one each side).\n\n", l.NoFileSoft, l.NoFileHard)

	if l.W3 != nil || l.W4 != nil || l.W7 != nil {
		p("### W3, W7, W4: activity fan-out\n\n")
		p("Each stream opens with `activity=1` (its opening summaries, one per registered workspace, are read before the run) and A's "+
			"activity changes %d times a second for %s (work on, work off: each change is a new value, so each is one envelope per "+
			"stream). Each stream must receive every change, in order (the activity cursors of one user's feed are consecutive), with no "+
			"`resync` or `unavailable`. W7 is W3 with 999 streams plus one stream that reads 1 KB/s (a throttled socket read) and, "+
			"so that it falls behind by more than the Hub's 1 MiB bound within the window, also follows B's inventory, which gets a "+
			"%s tick %d times a second that no other stream follows. CPU/env is the process's CPU over the window (client and server) "+
			"per envelope received.\n\n", liveRate, secs(l.Window), kb(slowTickBytes), slowTickRate)
		p("| workload | server | streams | changes | received | lost | out of order | resync/unavailable | ended early | p50 | p90 | p99 | p99.9 | max | opening took | CPU/env | other procs |\n")
		p("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		b.fanRow("W3", l.W3Probe)
		b.fanRow("W3", l.W3)
		b.fanRow("W3 (W7's baseline)", l.W7Base)
		b.fanRow("W7 (999 + 1 slow)", l.W7)
		b.fanRow("W4", l.W4Probe)
		b.fanRow("W4", l.W4)
		p("\n")
		l.memSection(b)
		if w := l.W7; w != nil && w.Slow != nil {
			s := w.Slow
			p("**W7's slow stream.** B's inventory got %d ticks of %s (the tick publisher stops finding an upstream once the Hub "+
				"has released B's, 3 s after the slow stream, its only subscriber, ended). The slow stream's client read %s in all. "+
				"Its id was probed once a second (`POST …/subscriptions` with an empty change, 500 ms timeout; a change waits for "+
				"the batch being written, so no answer means a write to it was blocked): %s. %s (the first 404); %s; the client "+
				"%s the end. The live heap (sampled every 250 ms) peaked at %s during W7 and %s during W3.\n\n",
				s.Ticks, kb(float64(s.TickBytes)), kb(float64(s.BytesRead)), s.Polls, upperFirst(s.endedFigure()), s.handlerFigure(),
				map[bool]string{true: "read", false: "did not read"}[s.SawEnd], mib(w.HeapPeak), mib(l.w3Ref().HeapPeak))
		}
	}
	l.w5w6w12Sections(b)
}

func (l *liveReport) memSection(b *mdWriter) {
	p := b.p
	if l.W3 == nil && l.W4 == nil {
		return
	}
	p("**Memory and goroutines per stream.** Each snapshot follows `debug.FreeOSMemory` (a collection that returns what it can to "+
		"the OS): before the streams open, and at the end of the window with every stream open. RSS is `VmRSS` of /proc/self/status: "+
		"everything resident (Go heap and goroutine stacks of both sides, runtime, C allocations; not the kernel's socket buffers). "+
		"The load generator's own share is measured the same way with the same client on the **null server**, which answers each "+
		"stream's opening from its accepting goroutine and then holds the bare socket (%s RSS, %s heap, %s stacks per stream); the "+
		"server side is the difference. Goroutines are the servers' (a stack holding `net/http.(*conn).serve`, "+
		"`(*connReader).backgroundRead` or a frame of Wharf's packages; the client's readers are package main).\n\n",
		kb(l.ClientRSS), kb(l.ClientHeap), kb(l.ClientStacks))
	p("| run | streams | process RSS growth / stream | server side (− load generator) | heap in use / stream | stacks / stream | servers' goroutines before → with the streams | per stream |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	for _, x := range []struct {
		name string
		r    *fanoutResult
	}{{"W3 probe", l.W3Probe}, {"W3 Wharf", l.W3}, {"W4 Wharf", l.W4}} {
		rss, server, gor, ok := l.memPerStream(x.r)
		if !ok {
			continue
		}
		r := x.r
		p("| %s | %d | %s | %s | %s | %s | %d → %d | %.2f |\n", x.name, r.Streams, kb(rss), kb(server),
			kb(perStream(int64(r.Mem0.Heap), int64(r.Mem1.Heap), r.Streams)), kb(perStream(int64(r.Mem0.Stacks), int64(r.Mem1.Stacks), r.Streams)),
			r.Mem0.Server, r.Mem1.Server, gor)
	}
	p("\n")
}

func (s *slowResult) endedFigure() string {
	if s.HubEnded < 0 {
		return "the Hub did not end it within the window"
	}
	return fmt.Sprintf("the Hub ended it %s into the window", secs(s.HubEnded))
}

func (s *slowResult) handlerFigure() string {
	if s.HandlerEnded < 0 {
		return "its handler had not returned when the benchmark closed its socket"
	}
	return fmt.Sprintf("its handler returned %s into the window (server side; the Hub's end is seen later, by the first 404 of a once-a-second probe)", secs(s.HandlerEnded))
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
