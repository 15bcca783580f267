package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/bench/internal/proc"
)

// Targets of the issue.
const (
	startFactor = 2.0 // remote start ≤ 2 × local + one round trip
	saveFactor  = 1.5 // remote save → patch ≤ 1.5 × local
)

type wharf struct {
	d   *daemontest.Daemon
	api *daemontest.Client
}

func (w *wharf) do(ctx context.Context, method, path string, in, out any, want int) error {
	status, raw, err := w.api.Do(ctx, method, path, in, out)
	if err == nil && status != want {
		err = fmt.Errorf("%s %s: %d %s", method, path, status, strings.TrimSpace(string(raw)))
	}
	return err
}

// register registers folder (made, git init) on backend, stopped.
func (w *wharf) register(ctx context.Context, folder, backend string) (string, error) {
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", err
	}
	var res struct{ Workspace struct{ ID string } }
	err := w.do(ctx, "POST", "api/hub/workspaces/configure", map[string]any{"path": folder, "backend": backend,
		"displayName": filepath.Base(folder), "init": true}, &res, http.StatusOK)
	return res.Workspace.ID, err
}

// startStop times one start of ws until it answers, then stops it.
func (w *wharf) startStop(ctx context.Context, ws string) (time.Duration, error) {
	t0 := time.Now()
	if err := w.do(ctx, "POST", "api/hub/sessions/"+ws+"/start", nil, nil, http.StatusOK); err != nil {
		return 0, err
	}
	took := time.Since(t0)
	return took, w.do(ctx, "POST", "api/hub/sessions/"+ws+"/stop", nil, nil, http.StatusOK)
}

func run(ctx context.Context, cfg config) ([]verdict, error) {
	dir, err := os.MkdirTemp("", "wbh") // short: sockets live below it
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	progress("building wharf, starting sshd")
	bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	bin, err := daemontest.BuildBinary(bctx, dir)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cannot build the wharf binary (run from the module root): %w", err)
	}
	host, err := startSSHD(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer host.stop()
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: bin, StateDir: filepath.Join(dir, "st"), Home: filepath.Join(dir, "home"),
		Args: []string{"--ssh-config", host.config}})
	if err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		d.Stop(sctx)
	}()
	w := &wharf{d: d}
	pw, err := d.FirstUserPassword()
	if err == nil {
		w.api, _, err = daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	}
	if err != nil {
		return nil, err
	}
	if err := w.do(ctx, "POST", "api/hub/hosts", map[string]string{"name": "bench", "destination": host.alias}, nil, http.StatusCreated); err != nil {
		return nil, err
	}
	local, err := w.register(ctx, filepath.Join(dir, "home", "local"), "local")
	if err != nil {
		return nil, err
	}
	remote, err := w.register(ctx, filepath.Join(host.home, "remote"), "ssh:bench")
	if err != nil {
		return nil, err
	}
	var rows []verdict
	v, err := starts(ctx, cfg, w, host, dir, local, remote)
	rows = append(rows, v...)
	if err != nil {
		return rows, err
	}
	v, err = saves(ctx, cfg, w, local, filepath.Join(dir, "home", "local"), remote, filepath.Join(host.home, "remote"))
	rows = append(rows, v...)
	if err != nil {
		return rows, err
	}
	v, err = many(ctx, cfg, w, host)
	return append(rows, v...), err
}

// starts compares a warm remote start with a local one and a round trip.
func starts(ctx context.Context, cfg config, w *wharf, host *sshd, dir, local, remote string) ([]verdict, error) {
	progress("first starts (the remote one copies the binary)")
	first, err := w.startStop(ctx, remote)
	if err != nil {
		return nil, err
	}
	if _, err := w.startStop(ctx, local); err != nil {
		return nil, err
	}
	var l, r []time.Duration
	for i := range cfg.rounds {
		progress("starts, round %d of %d", i+1, cfg.rounds)
		for _, ws := range []string{local, remote} {
			took, err := w.startStop(ctx, ws)
			if err != nil {
				return nil, err
			}
			if ws == local {
				l = append(l, took)
			} else {
				r = append(r, took)
			}
		}
	}
	rtt, err := host.roundTrips(ctx, dir, cfg.rounds)
	if err != nil {
		return nil, err
	}
	lm, rm, tm := median(l), median(r), median(rtt)
	limit := time.Duration(startFactor*float64(lm)) + tm
	return []verdict{
		{name: "Remote session start, binary already there (median)", measured: fmt.Sprintf("%s (local %s, ssh round trip %s)", ms(rm), ms(lm), ms(tm)),
			target: fmt.Sprintf("≤ 2 × local + one round trip = %s", ms(limit)), pass: rm <= limit},
		{name: "First remote start, copying the binary", measured: ms(first)},
	}, nil
}

// saves times a saved file until its document patch, on each machine.
func saves(ctx context.Context, cfg config, w *wharf, local, localDir, remote, remoteDir string) ([]verdict, error) {
	var med [2]time.Duration
	for i, ws := range []string{local, remote} {
		progress("saved files in %s", ws)
		if err := w.do(ctx, "POST", "api/hub/sessions/"+ws+"/start", nil, nil, http.StatusOK); err != nil {
			return nil, err
		}
		lat, err := saveLatencies(ctx, cfg.saves, w, ws, []string{localDir, remoteDir}[i])
		w.do(ctx, "POST", "api/hub/sessions/"+ws+"/stop", nil, nil, http.StatusOK)
		if err != nil {
			return nil, err
		}
		med[i] = median(lat)
	}
	limit := time.Duration(saveFactor * float64(med[0]))
	return []verdict{{name: "A saved file → its document patch (median)", measured: fmt.Sprintf("%s (local %s)", ms(med[1]), ms(med[0])),
		target: fmt.Sprintf("≤ 1.5 × local = %s", ms(limit)), pass: med[1] <= limit}}, nil
}

// saveLatencies writes n files in folder, each once the stream is quiet,
// timing each until a patch naming it arrives on the document topic.
func saveLatencies(ctx context.Context, n int, w *wharf, ws, folder string) ([]time.Duration, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := w.api.Request(sctx, "GET", "api/hub/live?ws="+ws+"&subs="+`%5B%7B%22topic%22%3A%22document%22%7D%5D`, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("live stream: %d", resp.StatusCode)
	}
	events := daemontest.ReadSSE(resp.Body)
	if _, err := events.Until(ctx, func(e daemontest.Event) bool { return strings.Contains(e.Data, `"snapshot"`) }); err != nil {
		return nil, fmt.Errorf("no snapshot: %w", err)
	}
	var out []time.Duration
	for i := range n {
		name := fmt.Sprintf("saved-%03d.txt", i)
		t0 := time.Now()
		if err := os.WriteFile(filepath.Join(folder, name), []byte("hello\n"), 0o644); err != nil {
			return nil, err
		}
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		_, err := events.Until(wctx, func(e daemontest.Event) bool { return strings.Contains(e.Data, name) })
		wcancel()
		if err != nil {
			return nil, fmt.Errorf("no patch for %s: %w", name, err)
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// many starts cfg.sessions remote workspaces at once.
func many(ctx context.Context, cfg config, w *wharf, host *sshd) ([]verdict, error) {
	var ids []string
	for i := range cfg.sessions {
		id, err := w.register(ctx, filepath.Join(host.home, fmt.Sprintf("many-%02d", i)), "ssh:bench")
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	before, _ := proc.VmRSS(w.d.Pid())
	progress("starting %d remote sessions at once", len(ids))
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(ids))
	for i, id := range ids {
		wg.Go(func() { errs[i] = w.do(ctx, "POST", "api/hub/sessions/"+id+"/start", nil, nil, http.StatusOK) })
	}
	wg.Wait()
	took := time.Since(t0)
	after, _ := proc.VmRSS(w.d.Pid())
	running := 0
	for _, err := range errs {
		if err == nil {
			running++
		}
	}
	if running < len(ids) {
		// Why, from the Hub's log: its warnings and errors.
		for _, line := range strings.Split(w.d.Stderr(), "\n") {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				progress("log: %s", line)
			}
		}
	}
	out, _ := exec.Command("pgrep", "-fc", filepath.Join(host.home, ".cache/wharf/bin")+".* session ").Output()
	conns := host.connections()
	for _, id := range ids {
		w.do(ctx, "POST", "api/hub/sessions/"+id+"/stop", nil, nil, http.StatusOK)
	}
	row := verdict{name: fmt.Sprintf("%d remote sessions started at once", len(ids)),
		measured: fmt.Sprintf("%d running after %s (%s processes on the host, over %d connections); Hub resident memory %.1f → %.1f MiB", running,
			took.Round(time.Millisecond), strings.TrimSpace(string(out)), conns, float64(before)/(1<<20), float64(after)/(1<<20)),
		target: "all of them", pass: running == len(ids)}
	return []verdict{row}, errors.Join(errs...)
}
