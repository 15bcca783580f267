package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"time"
)

// workload is one entry of the benchmark: its -workloads name; the group
// whose servers it shares (opened by the group's first workload and
// closed before the next group's, so no workload runs beside another
// group's idle servers and children); its run; a bound on its time (the
// program's deadline is their sum).
type workload struct {
	name, group string
	run         func(ctx context.Context, e *env) (*section, error)
	limit       func(c config) time.Duration
}

// workloads, in running order.
var workloads = []workload{
	{"w1", "empty", runW1, func(c config) time.Duration { return roundsLimit(c, 4) }},
	{"w2", "empty", runW2, func(c config) time.Duration { return roundsLimit(c, 2) }},
	{"w10", "empty", runW10, func(c config) time.Duration { return time.Duration(2+c.retries) * (c.attackOver + time.Minute) }},
	{"state1", "fleet", runState1, func(c config) time.Duration { return roundsLimit(c, 2) + buildLimit }},
	{"w11", "fleet", runW11, func(c config) time.Duration { return w11Limit + buildLimit }},
	{"w9", "fleet", runW9, func(c config) time.Duration {
		return roundsLimit(config{conns: []int{1}, rounds: c.rounds}, 3) + buildLimit
	}},
	{"state50", "fleet", runState50, func(c config) time.Duration { return roundsLimit(c, 2) + buildLimit + 5*time.Minute }},
	{"w3", "live", runW3, func(c config) time.Duration { return 3 * (c.liveWindow + 90*time.Second) }},
	{"w7", "live", runW7, func(c config) time.Duration { return 2*(c.liveWindow+90*time.Second) + slowAfterLimit }},
	{"w4", "live", runW4, func(c config) time.Duration { return 2 * (c.liveWindow + 150*time.Second) }},
	{"w5", "live", runW5, func(c config) time.Duration { return 2 * (c.warmup + w5Window + time.Minute) }},
	{"w6", "live", runW6, func(c config) time.Duration { return 2 * (w6Spread + w6Settle + time.Minute) }},
	{"w12", "live", runW12, func(c config) time.Duration { return 2*c.w12Idle + 90*time.Second }},
	{"d1", "d1", runD1, func(c config) time.Duration { return buildLimit + d1Limit }},
}

// roundsLimit bounds rounds of n targets at every concurrency, retries,
// process starts and wrk's whole seconds included.
func roundsLimit(c config, n int) time.Duration {
	return time.Duration(len(c.conns)*c.rounds*(1+c.retries)*n) * (c.warmup + c.duration + 2*time.Second)
}

// env is what the workloads share: the settings, the programs runs start,
// and the current group's servers, released by closeGroup.
type env struct {
	cfg      config
	progress func(string, ...any)
	self     string // this binary, re-executed as the load generator
	bin      string // ./cmd/wharf built for the workspace sessions, once a workload needs it
	wrk      string // wrk's path; "" when it is not used
	closers  []func()
	empty    *emptyHub
	fleet    *fleetHub
	live     *liveHub
}

// onClose runs f when the current group ends (last added, first run).
func (e *env) onClose(f func()) { e.closers = append(e.closers, f) }

func (e *env) closeGroup() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers, e.empty, e.fleet, e.live = nil, nil, nil, nil
}

// runAll runs the selected workloads in order and returns the report.
func runAll(ctx context.Context, cfg config, args []string, progress func(string, ...any)) (*report, error) {
	self, err := os.Executable()
	e, r := &env{cfg: cfg, progress: progress, self: self}, &report{started: time.Now(), args: args, cfg: cfg, machine: readMachine(), loadStart: loadavg()}
	if e.wrk, _ = exec.LookPath(cfg.wrk); e.wrk == "" {
		r.wrk = "wrk was not used (not on PATH, or -wrk empty): the load generator drove W1 and state1, and may have been their bottleneck"
		progress(r.wrk)
	}
	defer func() {
		if e.closeGroup(); e.bin != "" {
			os.RemoveAll(filepath.Dir(e.bin))
		}
	}()
	if cfg.cpuProfile != "" && err == nil {
		var f *os.File
		if f, err = os.Create(cfg.cpuProfile); err == nil {
			defer f.Close()
			err = pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	m0, group := mark(nil), ""
	for _, w := range workloads {
		if !cfg.has(w.name) || err != nil {
			continue
		}
		if w.group != group {
			e.closeGroup()
			group = w.group
		}
		var s *section
		if s, err = w.run(ctx, e); err == nil && ctx.Err() == nil {
			r.sections = append(r.sections, s)
		} else {
			err = errors.Join(errors.New(w.name), err, ctx.Err())
		}
	}
	e.closeGroup()
	var all run
	all.fill(m0, mark(nil), 0, 0)
	r.elapsed, r.loadEnd, r.others = time.Since(r.started), loadavg(), all.Others
	return r, err
}

// waitUntil waits for the wall clock to reach at; false when ctx ended
// first.
func waitUntil(ctx context.Context, at time.Time) bool {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
