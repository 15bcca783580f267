package daemontest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// CrashLoad runs the crash load: it starts a daemon on a fresh state
// directory, logs in as the first user, sets every writer up, then, Kills
// times, lets the writers mutate the Hub for a random time (see
// CrashConfig.MeanUptime), kills the daemon with SIGKILL while their
// requests are in flight, restarts it on the same state directory and
// checks that everything acknowledged is there, that what the kill cut
// either landed or did not, and that the restart left no journal pending
// (neither in its log nor in the database the next kill leaves: see
// crashjournals.go) and logged no error. It ends with a graceful stop, a
// last restart (which must recover nothing), a last check and what the
// families still wait for (Family.Settle).
// The error reports a run that could not go on (a daemon that does not
// start); what the checks find is in the figures.
func CrashLoad(ctx context.Context, cfg CrashConfig) (Figures, error) {
	cfg.defaults()
	r := &crashRun{cfg: cfg, fig: Figures{Seed: cfg.Seed, Acked: map[string]int{}, RecoveredKinds: map[string]int{},
		JournalsLeft: map[string]int{}}, notes: &notes{n: map[string]int{}}}
	start := time.Now()
	err := r.run(ctx)
	r.fig.Elapsed = time.Since(start)
	r.fig.Notes = r.notes.n
	return r.fig, err
}

// crashRun is one run's state.
type crashRun struct {
	cfg        CrashConfig
	fig        Figures
	writers    []*Writer
	client     *Client       // the run's device session; its Base follows restarts
	d          *Daemon       // the daemon that runs now, or the last one
	logSeen    int           // how much of d's stderr checkLog has read
	lastCensus journalCensus // the journals the last stopped daemon left
	notes      *notes
}

func (r *crashRun) run(ctx context.Context) error {
	cfg := r.cfg
	cfg.Logf("crash load: seed %d, %d kills, %d writers per family, %v between a restart and a kill on average",
		cfg.Seed, cfg.Kills, cfg.Writers, cfg.MeanUptime)
	if cfg.Binary == "" || cfg.Dir == "" {
		return errors.New("crash load: CrashConfig.Binary and CrashConfig.Dir are required")
	}
	dir, err := filepath.EvalSymlinks(cfg.Dir)
	if err != nil {
		return fmt.Errorf("crash load: %w", err)
	}
	for fi, fam := range cfg.Families {
		for i := range cfg.Writers {
			root := filepath.Join(dir, "tree", fmt.Sprintf("%s-%d", fam.Name, i))
			if err := os.MkdirAll(root, 0o755); err != nil {
				return fmt.Errorf("crash load: %w", err)
			}
			r.writers = append(r.writers, &Writer{Family: fam, Index: i, Root: root, Model: Model{},
				Rand: rand.New(rand.NewPCG(cfg.Seed, uint64(fi)<<32|uint64(i)+1)), notes: r.notes})
		}
	}
	r.fig.Writers = len(r.writers)
	args, release, err := r.prepare(ctx, dir)
	if err != nil {
		return err
	}
	defer release()
	if r.d, err = Start(ctx, Options{Binary: cfg.Binary, StateDir: filepath.Join(dir, "state"),
		Home: filepath.Join(dir, "home"), Args: args, Log: cfg.Log}); err != nil {
		return err
	}
	defer func() { r.d.Kill() }() // a no-op once the last daemon has stopped
	hc := NewHTTPClient(nil)
	defer hc.CloseIdleConnections()
	password, err := r.d.FirstUserPassword()
	if err != nil {
		return err
	}
	if r.client, _, err = Login(ctx, hc, r.d.URL(), FirstUser, password); err != nil {
		return err
	}
	for _, w := range r.writers {
		w.Client = r.client
		if w.Family.Setup == nil {
			continue
		}
		setupCtx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
		err := w.Family.Setup(setupCtx, w)
		cancel()
		if err != nil {
			return fmt.Errorf("crash load: setup of %s-%d: %w", w.Family.Name, w.Index, err)
		}
	}
	if err := r.verify(ctx, "after setup"); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	for k := 1; k <= cfg.Kills; k++ {
		uptime := time.Duration(rng.Int64N(int64(2 * cfg.MeanUptime)))
		epochStart := time.Now()
		acked, cut, err := r.epoch(ctx, uptime)
		killedAfter := time.Since(epochStart)
		if err != nil {
			r.fig.problem("kill %d: %v", k, err)
		}
		r.fig.Kills++
		r.checkLog(fmt.Sprintf("the daemon killed by kill %d", k))
		r.census(ctx, fmt.Sprintf("the daemon killed by kill %d", k), false)
		hc.CloseIdleConnections() // connections to the dead daemon
		restartStart := time.Now()
		if err := r.restart(ctx); err != nil {
			return err
		}
		recovered := r.fig.Recovered
		when := fmt.Sprintf("after kill %d", k)
		r.checkLog("the restart " + when)
		if err := r.verify(ctx, when); err != nil {
			return err
		}
		cfg.Logf("kill %d/%d after %v (drawn: %v): %d writes acknowledged, %d requests cut; "+
			"restart and check %v: %d journals recovered; %d problems so far",
			k, cfg.Kills, killedAfter.Round(time.Millisecond), uptime.Round(time.Millisecond), acked, cut,
			time.Since(restartStart).Round(time.Millisecond), r.fig.Recovered-recovered, len(r.fig.Problems))
	}
	// A graceful stop must leave nothing to recover either.
	if err := r.d.Stop(ctx); err != nil {
		r.fig.problem("graceful stop: %v", err)
	}
	r.checkLog("the daemon stopped gracefully")
	r.census(ctx, "the daemon stopped gracefully", true)
	if err := r.restart(ctx); err != nil {
		return err
	}
	recovered := r.fig.Recovered
	r.checkLog("the restart after the graceful stop")
	if n := r.fig.Recovered - recovered; n > 0 {
		r.fig.problem("the restart after a graceful stop, with no write under way, recovered %d journals", n)
	}
	if err := r.verify(ctx, "after the graceful stop"); err != nil {
		return err
	}
	r.settle(ctx)
	if err := r.d.Stop(ctx); err != nil {
		r.fig.problem("last graceful stop: %v", err)
	}
	r.checkLog("the last daemon")
	r.census(ctx, "the last daemon", true)
	return nil
}

// restart starts a new daemon on the state directory of the last one.
func (r *crashRun) restart(ctx context.Context) error {
	d, err := r.d.Restart(ctx)
	if err != nil {
		return err
	}
	r.d, r.logSeen = d, 0
	return r.awaitReady(ctx)
}

// awaitReady waits, within the request timeout, until the daemon says it
// is ready (/readyz): a journal a kill left on a host is settled in the
// background of the start, once the host answers, and until then the
// Hub is not ready (and refuses folder changes). A daemon that never
// becomes ready is a problem, not the end of the run: the checks then
// say what is wrong.
func (r *crashRun) awaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
	defer cancel()
	hc := NewHTTPClient(nil)
	defer hc.CloseIdleConnections()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", r.d.URL()+"readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			r.fig.problem("the daemon restarted was not ready within %v", r.cfg.RequestTimeout)
			return nil
		case <-tick.C:
		}
	}
}

// Log lines the checks look for.
const (
	recoveredLog = `msg="recovered an interrupted `
	// keptLog begins a recovery that settled a journal by keeping what
	// it found ("an interrupted worktree deletion did not remove the
	// tree; it stays registered").
	keptLog     = `msg="an interrupted `
	strandedLog = "a recovery journal is pending"
	errorLog    = "level=ERROR"
)

// checkLog reads the lines the running daemon logged since the last call:
// it counts the journals recovered and reports the ones left pending and
// any error logged.
func (r *crashRun) checkLog(who string) {
	text := r.d.Stderr()[r.logSeen:]
	text = text[:strings.LastIndex(text, "\n")+1] // whole lines only
	r.logSeen += len(text)
	for line := range strings.Lines(text) {
		switch {
		case strings.Contains(line, recoveredLog):
			r.fig.Recovered++
			r.fig.RecoveredKinds[recoveredKind(line)]++
		case strings.Contains(line, keptLog):
			_, rest, _ := strings.Cut(line, keptLog)
			msg, _, _ := strings.Cut(rest, `"`)
			r.fig.Recovered++
			r.fig.RecoveredKinds[msg]++
		case strings.Contains(line, strandedLog):
			r.fig.Pending++
			r.fig.problem("%s left a journal pending: %s", who, strings.TrimSpace(line))
		case strings.Contains(line, errorLog):
			r.fig.problem("%s logged an error: %s", who, strings.TrimSpace(line))
		}
	}
}

// recoveredKind reads a recovery log line: the journal's kind, from the
// message, and its outcome, from the attribute that states it.
func recoveredKind(line string) string {
	_, rest, _ := strings.Cut(line, recoveredLog)
	kind, attrs, _ := strings.Cut(rest, `"`)
	for _, f := range strings.Fields(attrs) {
		for _, a := range []string{"renamed=", "registered=", "removed="} {
			if strings.HasPrefix(f, a) {
				kind += " " + f
			}
		}
	}
	return kind
}

// verify checks every writer against the daemon that runs now, and that
// the registry holds no workspace outside the writers' folders and none
// whose folder is missing.
func (r *crashRun) verify(ctx context.Context, when string) error {
	r.client = r.client.At(r.d.URL())
	vctx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
	defer cancel()
	st, err := r.client.State(vctx)
	if err != nil {
		return fmt.Errorf("crash load: %s: %w", when, err)
	}
	for _, ws := range st.Workspaces {
		if !slices.ContainsFunc(r.writers, func(w *Writer) bool { return within(ws.Path, w.Root) }) {
			r.fig.Unexpected++
			r.fig.problem("%s: workspace %s at %s belongs to no writer", when, ws.ID, ws.Path)
		}
		if ws.Availability != "" {
			r.fig.problem("%s: workspace %s at %s is %s", when, ws.ID, ws.Path, ws.Availability)
		}
	}
	for _, w := range r.writers {
		w.Client = r.client
		v, err := w.verify(vctx, st)
		if err != nil {
			return fmt.Errorf("crash load: %s: %s-%d: %w", when, w.Family.Name, w.Index, err)
		}
		if v.landed {
			r.fig.Landed++
		}
		r.fig.Lost += len(v.lost)
		r.fig.Unexpected += len(v.unexpected)
		for _, p := range append(v.lost, v.unexpected...) {
			cutNote := ""
			if v.pending != "" {
				cutNote = fmt.Sprintf(" (a kill cut its %s, judged landed: %v)", v.pending, v.landed)
			}
			r.fig.problem("%s: %s-%d: %s%s", when, w.Family.Name, w.Index, p, cutNote)
		}
	}
	return nil
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
