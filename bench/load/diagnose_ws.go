package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/hub"
)

// w9Diag attributes W9's latency: the Hub's own cost without HTTP, and
// Wharf's latency at the rate rather than at saturation.
type w9Diag struct {
	InProcess runResult // hub.SetDisplayName from w9Clients goroutines, closed loop
	Paced     runResult // Wharf over HTTP at w9MinPerSec in all, open loop
	RawPaced  runResult // the raw SQLite write at the same pace: the commit's own tail at that rate
}

// w9Pace is each client's interval when the w9Clients together send
// w9MinPerSec requests a second.
const w9Pace = time.Duration(float64(w9Clients) / w9MinPerSec * float64(time.Second))

// pacedWindow is the measured window of the paced runs: twice the closed
// loop's, so it spans at least two expiries of the cached facts (every
// FactsTTL, 2 s by default) and a single stall does not make the p99 alone.
func pacedWindow(cfg config) time.Duration { return 2 * cfg.duration }

// diagnoseW9 runs the W9 diagnostics on the workspaces ids (one per
// client) of w and on the baseline database raw.
func diagnoseW9(ctx context.Context, cfg config, w *wharf, sessionID string, ids []string, raw *rawDB) w9Diag {
	var d w9Diag
	rt := raw.target(ids)
	rt.pace = w9Pace
	d.RawPaced = closedLoop(ctx, rt, w9Clients, cfg.warmup, pacedWindow(cfg), cfg.maxPerWorker, nil, nil)
	inProc := target{call: func(ctx context.Context, c, n int) (int, error) {
		if _, err := w.hub.SetDisplayName(ctx, ids[c], w9Names(c, n)); err != nil {
			return 0, err
		}
		return http.StatusOK, nil
	}}
	d.InProcess = closedLoop(ctx, inProc, w9Clients, cfg.warmup, cfg.duration, cfg.maxPerWorker, nil, nil)
	paced := displayNameTarget(w.base, bearer(sessionID), ids, nil)
	paced.pace = w9Pace
	d.Paced = closedLoop(ctx, paced, w9Clients, cfg.warmup, pacedWindow(cfg), cfg.maxPerWorker, w.accepted, nil)
	return d
}

// waitNoGit waits, up to limit, until no git child of this process runs,
// so a timing is not taken during the Hub's background refresh.
func waitNoGit(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for gitChildren() > 0 && time.Now().Before(deadline) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// diagnoseState50 times, in-process and from one goroutine, the parts of
// the 50-workspace state answer: the whole hub.State, the registry read
// alone, and what learning the folders' facts costs (their lstat, and one
// git inspection, which the Hub repeats for each folder every FactsTTL).
// Each timing starts once no git child runs and is the best of five, so
// the Hub's background refresh does not stand for the call's own cost.
func diagnoseState50(ctx context.Context, w *wharf, sessionID string, paths []string) ([]sqlDiag, error) {
	caller, err := w.hub.Authenticate(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	git := gitexec.New(gitexec.Options{})
	fsys := osfs.FS{}
	ways := []struct {
		name   string
		d      time.Duration
		maxOps int
		f      func() error
	}{
		{"`hub.State` (the registry read and the 50 workspace views)", time.Second, 100_000, func() error {
			_, err := w.hub.State(ctx, caller)
			return err
		}},
		{"the registry read alone (`Store.View` + `Tx.Workspaces`, 50 rows)", 500 * time.Millisecond, 100_000, func() error {
			return w.store.View(ctx, func(tx hub.Tx) error {
				_, err := tx.Workspaces()
				return err
			})
		}},
		{"`lstat` of the 50 folders (`osfs.FS.Lstat`)", 500 * time.Millisecond, 100_000, func() error {
			for _, p := range paths {
				if _, err := fsys.Lstat(p); err != nil {
					return err
				}
			}
			return nil
		}},
		{"one `GitRunner.Inspect` of a folder (`gitexec`: two git processes)", time.Second, 200, func() error {
			_, err := git.Inspect(ctx, paths[0])
			return err
		}},
	}
	var out []sqlDiag
	for _, way := range ways {
		waitNoGit(ctx, 5*time.Second)
		out = append(out, sqlDiag{way.name, bestOf(5, way.d/5, way.maxOps/5, way.f)})
	}
	return out, nil
}

// bestOf runs loop n times for d (or maxOps calls) each and keeps the run
// with the lowest time per call: a stall from outside (another process, a
// checkpoint) then does not stand for the cost of the call itself.
func bestOf(n int, d time.Duration, maxOps int, f func() error) authDiag {
	var best authDiag
	for i := range n {
		r := loop(1, d, max(1, maxOps), f)
		if i == 0 || (r.Ops > 0 && r.PerCall() < best.PerCall()) {
			best = r
		}
	}
	return best
}

// whatIfTTL is the FactsTTL of the what-if Wharf: longer than the whole
// run, so no request ever waits for a facts refresh. whatIfTTLText is how
// the report writes it.
const (
	whatIfTTL     = time.Hour
	whatIfTTLText = "1 h"
)

// ttlDiag is the what-if run: W9 paced and the 50-workspace state against
// a Wharf identical to the judged one but for FactsTTL = whatIfTTL. It
// shows what serving cached facts while refreshing them in the background
// would give, without changing the core.
type ttlDiag struct {
	W9Paced *runResult // nil when W9 was not selected
	Rows    []concRow  // probe and W1, one round; nil when state50 was not selected
}

// diagnoseLongTTL starts the what-if Wharf on the fleet's folders (already
// repositories), registers them, and runs the selected what-if workloads.
func diagnoseLongTTL(ctx context.Context, cfg config, bin string, fl *fleet, progress func(string, ...any)) (*ttlDiag, error) {
	w, err := startWharf(ctx, []string{bin}, whatIfTTL)
	if err != nil {
		return nil, fmt.Errorf("start what-if wharf: %w", err)
	}
	defer w.close()
	sessionID, _, err := w.login(ctx, "bench what-if")
	if err != nil {
		return nil, err
	}
	ids, err := registerPaths(ctx, w, sessionID, fl.paths)
	if err != nil {
		return nil, err
	}
	d := &ttlDiag{}
	if cfg.has("w9") {
		progress("what-if FactsTTL=%s: W9 paced at %.0f/s", whatIfTTLText, w9MinPerSec)
		paced := displayNameTarget(w.base, bearer(sessionID), ids[1:1+w9Clients], nil)
		paced.pace = w9Pace
		r := closedLoop(ctx, paced, w9Clients, cfg.warmup, pacedWindow(cfg), cfg.maxPerWorker, w.accepted, nil)
		d.W9Paced = &r
	}
	if cfg.has("state50") {
		stop, err := w.startAll(ctx, sessionID, ids[:stateRunning], progress)
		defer stop()
		if err != nil {
			return nil, fmt.Errorf("what-if: %w", err)
		}
		one := cfg
		one.rounds, one.retries = 1, 0
		label := fmt.Sprintf("what-if FactsTTL=%s: probe, W1 with %d workspaces", whatIfTTLText, len(ids))
		if _, _, d.Rows, err = stateRounds(ctx, one, w, sessionID, len(ids), label, progress); err != nil {
			return nil, err
		}
	}
	return d, ctx.Err()
}
