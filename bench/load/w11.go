package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// W11 targets (issue 3).
const (
	w11MaxStartP50 = 100 * time.Millisecond
	// w11PhaseLimit bounds the whole W11 phase; a cycle normally takes tens
	// of milliseconds.
	w11PhaseLimit = 3 * time.Minute
	// fdSettle bounds how long the fd check waits for descriptors whose
	// close is already under way (a connection's far end closing).
	fdSettle = 2 * time.Second
)

// w11Result is W11: start/stop cycles of a real `wharf session` child
// through the Hub's HTTP API.
type w11Result struct {
	Cycles       int
	Start, Stop  summary // latency of POST …/start and …/stop, measured cycles only
	Spawn        summary // baseline: spawn and reap `wharf version`, once per cycle
	FDBefore     int     // before the warm-up cycle
	FDBaseline   int     // after the warm-up cycle, before the measured ones
	FDAfter      int     // right after the last cycle
	FDSettled    int     // after up to fdSettle for closes under way
	FDSettleTime time.Duration
	ProcOK       bool       // /proc could be scanned
	Children     []procStat // this process's children after the cycles
	Zombies      int
	Elapsed      time.Duration
	Err          string // why the phase stopped early, "" when it ran to the end
}

// spawnVersion runs bin version and waits for it: the fork/exec/reap cost
// a session start cannot go below.
func spawnVersion(ctx context.Context, bin string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, "version")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	t0 := time.Now()
	err := cmd.Run()
	return time.Since(t0), err
}

// runW11 runs one warm-up and then cycles start/stop cycles of workspace
// id over HTTP, each cycle preceded by one timed spawn of bin version.
// Afterwards it counts this process's children, zombies among them, and
// its open descriptors against the count before the measured cycles.
func runW11(ctx context.Context, w *wharf, sessionID, id, bin string, cycles int) w11Result {
	res := w11Result{FDBefore: openFDs()}
	ctx, cancel := context.WithTimeout(ctx, w11PhaseLimit)
	defer cancel()
	start := time.Now()
	// One keep-alive connection for every call, opened by the warm-up, so
	// the descriptor count does not move with the client's connections.
	client := newClient()
	client.Timeout = 30 * time.Second // a start may take the backend's ReadyTimeout
	defer client.CloseIdleConnections()

	var spawns, starts, stops []time.Duration
	for i := range cycles + 1 {
		d, err := spawnVersion(ctx, bin)
		if err != nil {
			res.Err = fmt.Sprintf("cycle %d: %s version: %v", i, bin, err)
			break
		}
		t0 := time.Now()
		if err := w.startWorkspace(ctx, client, sessionID, id); err != nil {
			res.Err = fmt.Sprintf("cycle %d: %v", i, err)
			break
		}
		t1 := time.Now()
		if err := w.stopWorkspace(ctx, client, sessionID, id); err != nil {
			res.Err = fmt.Sprintf("cycle %d: %v", i, err)
			break
		}
		t2 := time.Now()
		if i == 0 { // the warm-up
			res.FDBaseline = openFDs()
			continue
		}
		spawns, starts, stops = append(spawns, d), append(starts, t1.Sub(t0)), append(stops, t2.Sub(t1))
	}
	if res.Err != "" {
		// Leave nothing running; the error is already the phase's outcome.
		w.stopWorkspace(context.WithoutCancel(ctx), client, sessionID, id)
	}
	res.Cycles = len(starts)
	res.Spawn, res.Start, res.Stop = summarize(spawns), summarize(starts), summarize(stops)
	res.Children, res.ProcOK = childrenOf(os.Getpid())
	res.Zombies = zombies(res.Children)
	res.FDAfter = openFDs()
	res.FDSettled = res.FDAfter
	if res.FDAfter > res.FDBaseline {
		res.FDSettled, res.FDSettleTime = settleFDs(ctx, res.FDBaseline)
	}
	res.Elapsed = time.Since(start)
	return res
}

// settleFDs re-counts the open descriptors every 20 ms until they are back
// to baseline or fdSettle has passed, and returns the last count and when
// it was taken.
func settleFDs(ctx context.Context, baseline int) (int, time.Duration) {
	t0 := time.Now()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(fdSettle)
	defer deadline.Stop()
	n := openFDs()
	for n > baseline {
		select {
		case <-tick.C:
			n = openFDs()
		case <-deadline.C:
			return n, time.Since(t0)
		case <-ctx.Done():
			return n, time.Since(t0)
		}
	}
	return n, time.Since(t0)
}

// verdicts of W11.
func (r w11Result) verdicts() []verdict {
	startOK := r.Err == "" && r.Cycles > 0 && r.Start.P50 <= w11MaxStartP50
	return []verdict{
		{"W11 start p50", fmt.Sprintf("%s over %d cycles (%.1f × the spawn-and-reap p50 of %s; p90 %s, max %s)%s",
			ms(r.Start.P50), r.Cycles, ratio(float64(r.Start.P50), float64(r.Spawn.P50)), ms(r.Spawn.P50),
			ms(r.Start.P90), ms(r.Start.Max), errNote(r.Err)),
			fmt.Sprintf("≤ %s", ms(w11MaxStartP50)), startOK},
		{"W11 zombies afterwards", fmt.Sprintf("%d zombie(s), %d child process(es) left", r.Zombies, len(r.Children)),
			"0 zombies, no child left", r.ProcOK && r.Zombies == 0 && len(r.Children) == 0},
		{"W11 open fds afterwards", fmt.Sprintf("%d after the cycles, baseline %d (%d before the warm-up)%s",
			r.FDSettled, r.FDBaseline, r.FDBefore, settleNote(r)),
			"= baseline", r.FDBaseline >= 0 && r.FDSettled == r.FDBaseline},
	}
}

func errNote(err string) string {
	if err == "" {
		return ""
	}
	return "; stopped early: " + err
}

func settleNote(r w11Result) string {
	if r.FDAfter == r.FDSettled {
		return ""
	}
	return fmt.Sprintf("; %d right after, settled in %s", r.FDAfter, r.FDSettleTime.Round(time.Millisecond))
}
