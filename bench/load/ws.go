package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // the driver adapters/sqlite uses
)

// The "fleet" group: workloads on a Wharf whose sessions run the built
// ./cmd/wharf, over real folders the Hub itself makes Git repositories.

const (
	w9Clients = 4
	w9MaxP99  = 5 * time.Millisecond
	w9MinRate = 500.0
	w11MaxP50 = 100 * time.Millisecond
	w11Limit  = 3 * time.Minute
)

type fleetHub struct {
	w      *wharf
	parent string
	ids    []string
}

// fleetGroup returns the group's Wharf with at least n workspaces.
func (e *env) fleetGroup(ctx context.Context, n int) (*fleetHub, error) {
	if e.fleet == nil {
		if err := e.buildChild(ctx); err != nil {
			return nil, err
		}
		parent, err := os.MkdirTemp("", "wharf-bench-ws-")
		if err != nil {
			return nil, err
		}
		e.onClose(func() { os.RemoveAll(parent) }) // after the Wharf's close has stopped its sessions
		w, err := e.openWharf(ctx, nil, nil)
		if err != nil {
			return nil, err
		}
		e.fleet = &fleetHub{w: w, parent: parent}
	}
	f := e.fleet
	for len(f.ids) < n {
		dir := filepath.Join(f.parent, fmt.Sprintf("ws-%02d", len(f.ids)+1))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, err
		}
		ids, err := f.w.register(ctx, []string{dir})
		if err != nil {
			return nil, err
		}
		f.ids = append(f.ids, ids...)
	}
	return f, nil
}

// fleetState is a state workload on the fleet: n workspaces registered,
// the first running of them started for the runs and stopped after.
func (e *env) fleetState(ctx context.Context, name string, n, running int, min float64, withWrk bool) (*section, error) {
	f, err := e.fleetGroup(ctx, n)
	if err != nil {
		return nil, err
	}
	w := f.w
	e.progress("%s: starting %d of the %d workspaces", name, running, n)
	for i, id := range f.ids[:running] {
		if err := w.lifecycle(ctx, id, "start"); err != nil {
			return nil, err
		}
		defer w.lifecycle(context.WithoutCancel(ctx), f.ids[i], "stop")
	}
	probe, body, err := e.stateProbe(ctx, w)
	if err != nil {
		return nil, err
	}
	var st struct{ Workspaces []struct{ Running bool } }
	listed := 0
	if err := json.Unmarshal(body, &st); err == nil {
		for _, x := range st.Workspaces {
			listed += b2i(x.Running)
		}
	}
	if len(st.Workspaces) != n {
		return nil, fmt.Errorf("%s: the state lists %d workspaces, want %d", name, len(st.Workspaces), n)
	}
	wt := target{name: name, srv: w.server, path: statePath, hdr: bearer(w.session)}
	if withWrk {
		wt = e.byWrk(wt)
	}
	rs, err := e.stateRounds(ctx, name+": probe, "+name, probe, wt)
	if err != nil {
		return nil, err
	}
	_, _, end, err := call(ctx, w.addr, http.MethodGet, statePath, bearer(w.session), nil, nil)
	same := err == nil && bytes.Equal(end, body)
	s := stateSection(fmt.Sprintf("%s: W1 with %d workspace(s), %d running", name, n, running), name+" W1", wt.name, min, rs, body,
		fmt.Sprintf("W1 (bearer `GET /api/hub/state`) against a Wharf with %d registered workspace(s) (real folders, each a Git "+
			"repository), %d of them running a real `wharf session` child.", n, running))
	s.verdicts = append(s.verdicts, verdict{name + " answer", fmt.Sprintf("%d workspaces, %d running; the %d B answer was %s after the runs",
		n, listed, len(body), map[bool]string{true: "byte-identical", false: "DIFFERENT"}[same]),
		fmt.Sprintf("%d running; unchanged during the runs", running), listed == running && same})
	return s, nil
}

func runState1(ctx context.Context, e *env) (*section, error) {
	return e.fleetState(ctx, "state1", 1, 1, 0.80, true)
}

func runState50(ctx context.Context, e *env) (*section, error) {
	return e.fleetState(ctx, "state50", 50, 10, 0.50, false)
}

// runW11 cycles a real session child: one warm-up, then -w11-cycles
// start/stop cycles over HTTP, each after one spawn and reap of the same
// binary (`version`), the floor a start cannot go below. Then no child and
// no zombie may be left, and the descriptors must be back to their count
// after the warm-up (waiting up to 2 s for closes under way).
func runW11(ctx context.Context, e *env) (*section, error) {
	f, err := e.fleetGroup(ctx, 1)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, w11Limit)
	defer cancel()
	w, id := f.w, f.ids[0]
	e.progress("W11: 1 warm-up and %d start/stop cycles", e.cfg.w11Cycles)
	fd0, fdBase, note := openFDs(), 0, ""
	var spawns, starts, stops []time.Duration
	for i := range e.cfg.w11Cycles + 1 {
		t0 := time.Now()
		err := exec.CommandContext(ctx, e.bin, "version").Run()
		t1 := time.Now()
		if err == nil {
			err = w.lifecycle(ctx, id, "start")
		}
		t2 := time.Now()
		if err == nil {
			err = w.lifecycle(ctx, id, "stop")
		}
		if err != nil {
			note = fmt.Sprintf("; stopped at cycle %d: %v", i, err)
			w.lifecycle(context.WithoutCancel(ctx), id, "stop")
			break
		}
		if i == 0 {
			fdBase = openFDs()
			continue
		}
		spawns, starts, stops = append(spawns, t1.Sub(t0)), append(starts, t2.Sub(t1)), append(stops, time.Since(t2))
	}
	kids, procOK := children()
	zombies := 0
	for _, k := range kids {
		zombies += b2i(k.State == 'Z')
	}
	fds := openFDs()
	for settle := time.Now(); fds > fdBase && time.Since(settle) < 2*time.Second; fds = openFDs() {
		time.Sleep(20 * time.Millisecond)
	}
	sp, st, so := summarize(spawns), summarize(starts), summarize(stops)
	s := &section{title: "W11: start/stop cycles of a real workspace session", verdicts: []verdict{
		{"W11 start p50", fmt.Sprintf("%s over %d cycles (%.1f × the spawn-and-reap p50 of %s; p90 %s, max %s)%s", ms(st.P50), st.N,
			ratio(float64(st.P50), float64(sp.P50)), ms(sp.P50), ms(st.P90), ms(st.Max), note), "≤ " + ms(w11MaxP50),
			note == "" && st.N > 0 && st.P50 <= w11MaxP50},
		{"W11 zombies afterwards", fmt.Sprintf("%d zombie(s), %d child process(es) left", zombies, len(kids)), "0 zombies, no child left",
			procOK && len(kids) == 0},
		{"W11 open fds afterwards", fmt.Sprintf("%d after the cycles, baseline %d (%d before the warm-up)", fds, fdBase, fd0), "= baseline",
			fdBase > 0 && fds == fdBase}}}
	t := newTable("figure", "p50", "p90", "p99", "max")
	for _, x := range []struct {
		name string
		s    summary
	}{{"start (HTTP)", st}, {"stop (HTTP)", so}, {"baseline: spawn and reap `wharf version`", sp}} {
		t.add(x.name, ms(x.s.P50), ms(x.s.P90), ms(x.s.P99), ms(x.s.Max))
	}
	s.tables = []*table{t}
	s.reading = []string{fmt.Sprintf("W11: a start costs %s at the median, of which %s is what spawning and reaping the same binary "+
		"costs anyway; the rest is the child's socket and readiness line, the backend's facts call and the Hub's commit of the "+
		"workspace's auto-start mark.", ms(st.P50), ms(sp.P50))}
	return s, nil
}

// w9Name is the name client w sends in its n-th request: two in turn, so
// every request changes the stored name and the Hub really writes.
func w9Name(w, n int) string { return fmt.Sprintf("bench client %d %c", w+1, "ab"[n%2]) }

// runW9 measures display-name changes from 4 closed-loop clients, each
// renaming its own workspace, beside two baselines on a fresh database
// file with adapters/sqlite's settings: raw SQLite (the same UPDATE in its
// own transaction, in-process) and the HTTP write probe (a minimal handler
// committing that write). Targets are absolute (issue 3).
func runW9(ctx context.Context, e *env) (*section, error) {
	f, err := e.fleetGroup(ctx, 1+w9Clients)
	if err != nil {
		return nil, err
	}
	w, ids := f.w, f.ids[1:1+w9Clients]
	dir, err := os.MkdirTemp("", "wharf-bench-raw-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: filepath.Join(dir, "raw.db")}).EscapedPath()+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE workspaces (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL UNIQUE,
		display_name TEXT NOT NULL, auto_start INTEGER NOT NULL) STRICT`); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, err := db.Exec(`INSERT INTO workspaces (id, path, display_name, auto_start) VALUES (?, ?, ?, 0)`, id, "/nowhere/"+id, id); err != nil {
			return nil, err
		}
	}
	rename := func(ctx context.Context, id, name string) error { // the write Wharf commits, in its own transaction
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workspaces SET path = ?, display_name = ?, auto_start = ? WHERE id = ?`,
			"/nowhere/"+id, name, false, id); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/hub/workspaces/{id}/display-name", func(rw http.ResponseWriter, r *http.Request) {
		var b struct{ DisplayName string }
		if json.NewDecoder(http.MaxBytesReader(rw, r.Body, 1<<16)).Decode(&b) != nil || rename(r.Context(), r.PathValue("id"), b.DisplayName) != nil {
			http.Error(rw, `{"error":"failed"}`, http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(map[string]any{"workspace": map[string]string{"id": r.PathValue("id"), "displayName": b.DisplayName}})
	})
	probe, err := e.serve(w.d, mux)
	if err != nil {
		return nil, err
	}
	post := func(w, n int) (string, []byte) {
		return "/api/hub/workspaces/" + ids[w] + "/display-name", fmt.Appendf(nil, `{"displayName":%q}`, w9Name(w, n))
	}
	rs, err := e.rounds(ctx, "W9: raw SQLite, HTTP write probe, Wharf", []int{w9Clients},
		target{name: "raw SQLite", call: func(ctx context.Context, w, n int) (int, error) { return 200, rename(ctx, ids[w], w9Name(w, n)) }},
		target{name: "HTTP write probe", srv: probe, post: post},
		target{name: "Wharf", srv: w.server, hdr: bearer(w.session), post: post})
	if err != nil {
		return nil, err
	}
	var st struct {
		Workspaces []struct{ ID, DisplayName string }
	}
	_, _, _, err = call(ctx, w.addr, http.MethodGet, statePath, bearer(w.session), nil, &st)
	kept := err == nil
	for _, x := range st.Workspaces {
		for i, id := range ids {
			if last := rs.last[2].Sent; x.ID == id && (len(last) <= i || x.DisplayName != w9Name(i, last[i]-1)) {
				kept = false
			}
		}
	}
	med := func(k int, f func(run) float64) float64 { return rs.medRun(0, k, f) }
	p99 := func(x run) float64 { return float64(x.Lat.P99) }
	list := func(f func(run) string) string { return rs.list(0, func(x []run) string { return f(x[2]) }) }
	wp99, wrate := time.Duration(med(2, p99)), med(2, run.RPS)
	non200, errs, _ := rs.answers(0, 2)
	s := &section{title: fmt.Sprintf("W9: `POST /api/hub/workspaces/{id}/display-name` from %d clients", w9Clients), verdicts: []verdict{
		{"W9 display-name p99, 4 clients", fmt.Sprintf("%s (%s); raw SQLite write p99 %s, HTTP write probe p99 %s (Wharf = %.1f × probe)",
			ms(wp99), list(func(x run) string { return ms(x.Lat.P99) }), ms(time.Duration(med(0, p99))), ms(time.Duration(med(1, p99))),
			ratio(float64(wp99), med(1, p99))), fmt.Sprintf("≤ %s (absolute)", ms(w9MaxP99)), wp99 <= w9MaxP99},
		{"W9 mutations/s, 4 clients", fmt.Sprintf("%.0f/s (%s) = %.2f × raw SQLite writes (%.0f/s), %.2f × HTTP write probe (%.0f/s)", wrate,
			list(func(x run) string { return rps(x.RPS()) }), ratio(wrate, med(0, run.RPS)), med(0, run.RPS), ratio(wrate, med(1, run.RPS)),
			med(1, run.RPS)), fmt.Sprintf("≥ %.0f/s (absolute)", w9MinRate), wrate >= w9MinRate},
		{"W9 answers", fmt.Sprintf("%d non-200, %d errors; each client's workspace %s the last name it sent", non200, errs,
			map[bool]string{true: "holds", false: "does NOT hold"}[kept]), "0 non-200, 0 errors, every write landed",
			non200 == 0 && errs == 0 && kept}}}
	s.text = []string{fmt.Sprintf("Each of %d closed-loop bearer clients renames its own workspace, alternating two names, so every "+
		"request commits a write. The baselines run in the same rounds on a fresh database file with adapters/sqlite's settings (WAL, "+
		"`synchronous=FULL`, `busy_timeout`, `BEGIN IMMEDIATE`, one connection): **raw SQLite**, the "+
		"UPDATE Wharf commits, in its own transaction, from %d goroutines of this process (so its CPU is all “server”), and the "+
		"**HTTP write probe**, a minimal handler on the same route committing that write.", w9Clients, w9Clients)}
	every, note := rs.everyRun()
	s.tables, s.after = []*table{every}, []string{note}
	s.reading = []string{fmt.Sprintf("W9: every mutation is one `synchronous=FULL` commit through one writer connection, so raw "+
		"SQLite (%.0f writes/s, p99 %s) is the ceiling this file system allows; the HTTP write probe adds the HTTP exchange; Wharf adds "+
		"authentication, the workspace lookup, the write transaction and the workspace view its answer carries.", med(0, run.RPS),
		ms(time.Duration(med(0, p99))))}
	return s, nil
}
