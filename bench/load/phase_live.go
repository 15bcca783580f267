package main

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// Live workloads' shapes and targets (the live stream's issue).
const (
	w3Streams   = 1000
	w4Streams   = 5000
	liveRate    = 10 // activity changes a second (W3, W4, W7)
	w3MaxP50    = 15 * time.Millisecond
	w3MaxP99    = 50 * time.Millisecond
	w3MaxMem    = 64 << 10 // bytes per stream
	w3MaxGorout = 3.0      // per stream
	w4MaxP99    = 250 * time.Millisecond
	w7MaxFactor = 1.2 // the others' p99 against W3's
	// coreDiagWindow bounds the window of W3's in-process diagnosis.
	coreDiagWindow = 10 * time.Second
)

// liveReport is everything the live workloads measured; nil fields were
// not run.
type liveReport struct {
	NoFileSoft, NoFileHard uint64
	NoFileErr              string
	// The load generator's own memory per stream (the null server).
	ClientRSS, ClientHeap, ClientStacks float64
	W3Probe, W3                         *fanoutResult
	W4Probe, W4                         *fanoutResult
	W7                                  *fanoutResult
	W7Base                              *fanoutResult // W3's Wharf run, made for W7 when W3 was not selected
	W5Probe, W5                         *w5Result
	W6Probe, W6                         *w6Result
	W12                                 *w12Result
	W3Core                              *liveCoreDiag // W3 in-process without HTTP; nil under -no-diagnosis
	Window                              time.Duration
}

// w3Ref is the W3 run W7 compares with.
func (l *liveReport) w3Ref() *fanoutResult {
	if l.W3 != nil {
		return l.W3
	}
	return l.W7Base
}

// settle waits, at most limit, until the servers' goroutine count has not
// moved for half a second: the previous run's connections are gone.
func settle(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	last, _, _ := goroutineCounts()
	stable := time.Now()
	for time.Now().Before(deadline) && time.Since(stable) < 500*time.Millisecond {
		if !waitUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return
		}
		if n, _, _ := goroutineCounts(); n != last {
			last, stable = n, time.Now()
		}
	}
	runtime.GC()
}

// runLiveHub runs the selected live workloads against a Wharf whose
// sessions are fakes.Backend's and against the SSE probe, each after the
// other, and closes both before returning.
func runLiveHub(ctx context.Context, cfg config, rep *report, progress func(string, ...any)) error {
	l := &liveReport{Window: cfg.liveWindow}
	rep.Live = l
	var err error
	if l.NoFileSoft, l.NoFileHard, err = raiseNoFile(2*w4Streams + 1024); err != nil {
		l.NoFileErr = err.Error()
	}
	progress("starting a live Wharf (fakes.Backend sessions) and the SSE probe")
	lw, err := startLiveWharf(ctx)
	if err != nil {
		return err
	}
	defer lw.close()
	wt := lw.target()
	pt, psrv, err := startProbeTarget(lw.a)
	if err != nil {
		return err
	}
	defer psrv.close()
	fan := func(label string, t liveTarget, o fanoutOpts) *fanoutResult {
		settle(ctx, 5*time.Second)
		progress("%s: %d streams, %d changes/s for %s against %s", label, o.streams, o.rate, o.window, t.name)
		r := runFanout(ctx, t, o)
		progress("  p50 %s, p99 %s, %d received, %d lost, %d unexpected%s", ms(r.Lat.P50), ms(r.Lat.P99), r.Received, r.Lost,
			r.Unexpected, errSuffix(r.Err))
		return r
	}
	if cfg.has("w3") {
		settle(ctx, 5*time.Second)
		progress("W3: the load generator's memory per stream (%d streams on a null server)", w3Streams)
		if l.ClientRSS, l.ClientHeap, l.ClientStacks, err = clientMemory(ctx, w3Streams); err != nil {
			return fmt.Errorf("W3 client memory: %w", err)
		}
		l.W3Probe = fan("W3", pt, fanoutOpts{streams: w3Streams, rate: liveRate, window: cfg.liveWindow, mem: true})
		l.W3 = fan("W3", wt, fanoutOpts{streams: w3Streams, rate: liveRate, window: cfg.liveWindow, mem: true})
		if !cfg.skipDiagnosis {
			settle(ctx, 5*time.Second)
			window := min(cfg.liveWindow, coreDiagWindow)
			progress("W3 diagnosis: %d streams in-process (hub.OpenLive, LiveStream.Next), %d changes/s for %s", w3Streams, liveRate, window)
			l.W3Core = diagnoseLiveCore(ctx, lw, w3Streams, liveRate, window)
			progress("  p50 %s, p99 %s%s", ms(l.W3Core.Lat.P50), ms(l.W3Core.Lat.P99), errSuffix(l.W3Core.Err))
		}
	}
	if cfg.has("w7") {
		if l.W3 == nil {
			l.W7Base = fan("W7 baseline (W3)", wt, fanoutOpts{streams: w3Streams, rate: liveRate, window: cfg.liveWindow})
		}
		l.W7 = fan("W7", wt, fanoutOpts{streams: w3Streams - 1, rate: liveRate, window: cfg.liveWindow, slow: true})
		if s := l.W7.Slow; s != nil {
			progress("  slow stream: Hub ended it at %s, handler returned at %s, %d B read", s.HubEnded, s.HandlerEnded, s.BytesRead)
		}
	}
	if cfg.has("w4") {
		l.W4Probe = fan("W4", pt, fanoutOpts{streams: w4Streams, rate: liveRate, window: cfg.liveWindow})
		l.W4 = fan("W4", wt, fanoutOpts{streams: w4Streams, rate: liveRate, window: cfg.liveWindow, mem: true})
	}
	if cfg.has("w5") {
		for _, t := range []liveTarget{pt, wt} {
			settle(ctx, 5*time.Second)
			if t.lw != nil {
				lw.waitInventoryClosed(ctx, lw.a, 5*time.Second)
			}
			progress("W5: %d streams, %d subscription changes/s each, against %s", w5Streams, w5Changes, t.name)
			r := runW5(ctx, t)
			progress("  POST p50 %s, p99 %s, %d late on the server, %d late at the client%s", ms(r.Lat.P50), ms(r.Lat.P99),
				r.ServerLate, r.ClientLate, errSuffix(r.Err))
			if t.lw == nil {
				l.W5Probe = r
			} else {
				l.W5 = r
			}
		}
	}
	if cfg.has("w6") {
		for _, t := range []liveTarget{pt, wt} {
			settle(ctx, 5*time.Second)
			if t.lw != nil {
				lw.waitInventoryClosed(ctx, lw.a, 5*time.Second)
				settle(ctx, 5*time.Second)
			}
			progress("W6: %d streams dropped and reconnected within %s, against %s", w6Streams, w6Spread, t.name)
			r := runW6(ctx, t)
			progress("  hello p99 %s, max from the drop %s, settled in %s%s", ms(r.Hello.P99), ms(r.HelloMax), r.Settled, errSuffix(r.Err))
			if t.lw == nil {
				l.W6Probe = r
			} else {
				l.W6 = r
			}
		}
	}
	if cfg.has("w12") {
		settle(ctx, 5*time.Second)
		lw.waitInventoryClosed(ctx, lw.a, 5*time.Second)
		l.W12 = runW12(ctx, wt, cfg.w12Idle, progress)
		progress("  %.2f %% of one core", 100*l.W12.Share())
	}
	return ctx.Err()
}

func errSuffix(err string) string {
	if err == "" {
		return ""
	}
	return "; " + err
}

// liveBudget bounds the live phase.
func (c config) liveBudget() time.Duration {
	var d time.Duration
	fan := c.liveWindow + 90*time.Second // opening, grace, snapshots
	if c.has("w3") {
		d += 3*fan + 30*time.Second
	}
	if c.has("w7") {
		d += 2*fan + slowAfterLimit
	}
	if c.has("w4") {
		d += 2 * (fan + 60*time.Second)
	}
	if c.has("w5") {
		d += 2 * (w5Warmup + w5Window + time.Minute)
	}
	if c.has("w6") {
		d += 2 * (w6Spread + w6Settle + time.Minute)
	}
	if c.has("w12") {
		d += 2*c.w12Idle + 90*time.Second
	}
	return d
}
