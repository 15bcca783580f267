package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	_ "modernc.org/sqlite" // the driver adapters/sqlite uses
)

// The request/response workloads, on one Wharf whose sessions run the
// built ./cmd/wharf: W1, W2 and W10 before any workspace exists, then
// state1, W11, W9 and state50 over folders the Hub makes Git repositories.

const (
	statePath                         = "/api/hub/state"
	crossOrigin, attackN, attackConns = 100, 100, 10 // W2's cross-origin requests; W10's wrong passwords, and W1's connections
	w9Clients, w9MaxP99, w9MinRate    = 4, 5 * time.Millisecond, 500.0
	w11MaxP50, w11Limit, w11Cycles    = 100 * time.Millisecond, 3 * time.Minute, 50
)

// hubGroup is the group's Wharf (its session is also a cookie's), the probe
// of its state with no workspace, W1's rounds (with W2's) and workspaces.
type hubGroup struct {
	w             *wharf
	probe, parent string
	rounds        *rounds
	ids           []string
}

func (e *env) hub(ctx context.Context, n int) (h *hubGroup, err error) {
	if h = e.hubs; h == nil {
		h = &hubGroup{}
		if err = e.buildChild(ctx); err == nil {
			h.parent, err = mkTemp(e, "wharf-bench-ws-")
		}
		if err == nil {
			h.w, err = e.openWharf(ctx, nil, nil)
		}
		if err == nil && n == 0 {
			h.probe, _, err = e.stateProbe(ctx, h.w)
		}
		if e.hubs = h; err != nil {
			return nil, err
		}
	}
	for len(h.ids) < n && err == nil {
		dir, ids := filepath.Join(h.parent, fmt.Sprintf("ws-%02d", len(h.ids)+1)), []string(nil)
		if err = os.Mkdir(dir, 0o700); err == nil {
			ids, err = h.w.register(ctx, dir)
			h.ids = append(h.ids, ids...)
		}
	}
	return h, err
}

func (h *hubGroup) state(name string, hdr http.Header) target {
	return target{name: name, addr: h.w.addr, path: statePath, hdr: hdr}
}

// stateProbe serves w's state answer, head and body, from a minimal handler.
func (e *env) stateProbe(ctx context.Context, w *wharf) (addr string, body []byte, err error) {
	return e.probeOf(ctx, w, statePath)
}

// probeOf serves w's answer to GET path, head and body, from a minimal
// handler: the bare handler a workload's throughput is a ratio of.
func (e *env) probeOf(ctx context.Context, w *wharf, path string) (addr string, body []byte, err error) {
	status, h, body, err := call(ctx, w.addr, http.MethodGet, path, bearer(w.session), nil, nil)
	if err != nil || status != http.StatusOK {
		return "", nil, fmt.Errorf("%s: %d %s %v", path, status, body, err)
	}
	h.Del("Date") // the server writes its own
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+path, func(rw http.ResponseWriter, _ *http.Request) { maps.Copy(rw.Header(), h); rw.Write(body) })
	addr, err = e.serve(w.d, mux)
	return addr, body, err
}

// credentialsPath and credentialsN are creds50's: the credential list with
// 50 tokens in it.
const (
	credentialsPath = "/api/hub/credentials"
	credentialsN    = 50
)

// runCreds50 stores 50 tokens, then measures GET /api/hub/credentials
// against a bare handler serving the same answer, as W1 measures the
// state: the list is a read of the catalog the Hub keeps in memory and of
// the vault's unlocked set, so it must keep W1's ratio.
func runCreds50(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 0)
	if err != nil {
		return nil, err
	}
	for i := range credentialsN {
		body := map[string]any{"name": fmt.Sprintf("bench token %02d", i), "host": fmt.Sprintf("git%02d.example.com", i),
			"token": fmt.Sprintf("bench-token-%02d", i), "capabilities": []string{"https-git"}}
		if _, _, _, err := call(ctx, h.w.addr, http.MethodPost, credentialsPath+"/token", bearer(h.w.session), body, &struct{}{}); err != nil {
			return nil, err
		}
	}
	probe, _, err := e.probeOf(ctx, h.w, credentialsPath)
	if err != nil {
		return nil, err
	}
	rs, err := e.rounds(ctx, "creds50", conns, target{name: "probe", addr: probe, path: credentialsPath},
		target{name: "creds50", addr: h.w.addr, path: credentialsPath, hdr: bearer(h.w.session)})
	return stateVerdicts(rs, "creds50", "creds50", 0.80), err
}

func (e *env) stateRounds(ctx context.Context, label, probe string, ts ...target) (*rounds, error) {
	return e.rounds(ctx, label, conns, append([]target{{name: "probe", addr: probe, path: statePath}}, ts...)...)
}

// stateVerdicts judges target name against the probe (target 0) at every
// concurrency: throughput ≥ min × probe's, p99 ≤ 2 × probe's + 1 ms, 200s.
func stateVerdicts(rs *rounds, name, label string, min float64) (vs []verdict) {
	j := slices.Index(rs.names, name)
	for c, n := range rs.conns {
		f2 := func(f func([]run) float64) func([]run) string {
			return func(x []run) string { return fmt.Sprintf("%.2f", f(x)) }
		}
		tr := func(x []run) float64 { return ratio(x[j].RPS(), x[0].RPS()) }
		pr := func(x []run) float64 { return ratio(float64(x[j].Lat.P99), float64(2*x[0].Lat.P99+time.Millisecond)) }
		med := func(k int, f func(run) float64) float64 { return rs.medRun(c, k, f) }
		cpu := func(k int) string {
			return us(time.Duration(med(k, func(x run) float64 { return float64(x.perReq(x.Server)) })))
		}
		p99 := func(k int) string {
			return ms(time.Duration(med(k, func(x run) float64 { return float64(x.Lat.P99) })))
		}
		tm, pm := rs.med(c, tr), rs.med(c, pr)
		non200, errs, ok := rs.answers(c, j)
		vs = append(vs, verdict{fmt.Sprintf("%s throughput, %d conns", label, n), fmt.Sprintf("%.2f × probe (%s); %s vs %s req/s; server "+
			"CPU/req %s, probe %s", tm, rs.list(c, f2(tr)), rps(med(j, run.RPS)), rps(med(0, run.RPS)), cpu(j), cpu(0)),
			fmt.Sprintf("≥ %.2f × probe", min), tm >= min},
			verdict{fmt.Sprintf("%s p99, %d conns", label, n), fmt.Sprintf("%.2f × limit (%s); p99 %s, probe %s", pm, rs.list(c, f2(pr)), p99(j),
				p99(0)), "≤ 1 × limit, limit = 2 × probe p99 + 1 ms", pm <= 1},
			verdict{fmt.Sprintf("%s answers, %d conns", label, n), fmt.Sprintf("%d non-200, %d errors", non200, errs), "0 non-200, 0 errors",
				ok && non200 == 0 && errs == 0})
	}
	return vs
}

func runW1(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 0)
	if err != nil {
		return nil, err
	}
	ts := []target{h.state("W1", bearer(h.w.session))}
	if e.cfg.has("w2") {
		ts = append(ts, h.state("W2", h.w.browser(h.w.session, "http://"+h.w.addr, "same-origin")))
	}
	h.rounds, err = e.stateRounds(ctx, "W1", h.probe, ts...)
	return stateVerdicts(h.rounds, "W1", "W1", 0.80), err
}

// runW2 judges W2 (in W1's rounds when both run); cookie revocations of
// the session itself from foreign origins must all be 403.
func runW2(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 0)
	if err == nil && h.rounds == nil {
		h.rounds, err = e.stateRounds(ctx, "W2", h.probe, h.state("W2", h.w.browser(h.w.session, "http://"+h.w.addr, "same-origin")))
	}
	if err != nil {
		return nil, err
	}
	w, vs := h.w, stateVerdicts(h.rounds, "W2", "W2", 0.45)
	id, err := w.login(ctx, "bench cross-origin")
	var list struct{ Sessions []map[string]any }
	if err == nil {
		_, _, _, err = call(ctx, w.addr, http.MethodGet, "/api/hub/sessions", bearer(id), nil, &list)
	}
	handle := ""
	for _, x := range list.Sessions {
		if x["current"] == true {
			handle, _ = x["handle"].(string)
		}
	}
	variants := []http.Header{w.browser(id, "http://evil.example", "cross-site"), w.browser(id, "http://evil.example", "same-origin"),
		w.browser(id, "http://"+w.addr, "cross-site"), w.browser(id, "http://127.0.0.1:1", "same-site")}
	forbidden, other := 0, map[int]int{}
	for i := 0; i < crossOrigin && err == nil; i++ {
		var status int
		status, _, _, err = call(ctx, w.addr, http.MethodPost, "/api/hub/sessions/"+handle+"/revoke", variants[i%4], nil, nil)
		if status == http.StatusForbidden {
			forbidden++
		} else {
			other[status]++
		}
	}
	alive, _, _, _ := call(ctx, w.addr, http.MethodGet, statePath, bearer(id), nil, nil)
	return append(vs, verdict{"W2 cross-origin state change", fmt.Sprintf("%d/%d answered 403 (others: %v); the session answers %d "+
		"afterwards", forbidden, crossOrigin, other, alive), "100 % 403, session untouched", forbidden == crossOrigin && alive == http.StatusOK}), err
}

// runW10 runs W1 for -attack-over + 1 s, then again beside a second wrk
// sending the wrong passwords, each -attack-over / 100 after an answer.
func runW10(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 0)
	if err != nil {
		return nil, err
	}
	w1, window := h.state("W1", bearer(h.w.session)), e.cfg.attackOver+time.Second
	e.progress("W10: W1 at %d conns for %s, then again beside %d wrong passwords", attackConns, window, attackN)
	base := e.measure(ctx, w1, attackConns, window)
	attack := target{addr: h.w.addr, path: "/login", hdr: http.Header{"Content-Type": {"application/json"}}, env: []string{
		`BENCH_BODY={"name":"` + benchUser + `","password":"not the password","deviceLabel":"bench attacker"}`,
		fmt.Sprintf("BENCH_DELAY=%d", e.cfg.attackOver.Milliseconds()/attackN), fmt.Sprintf("BENCH_STOP=%d", attackN)}}
	hub, done := h.w.d.Hub(), make(chan run, 1)
	v0 := hub.PasswordVerifications()
	go func() { done <- e.measure(ctx, attack, 1, window) }()
	during, a := e.measure(ctx, w1, attackConns, window), <-done
	verified, th := hub.PasswordVerifications()-v0, append(a.Threads, wrkThread{})[0]
	n401, n429, budget := th.Status[http.StatusUnauthorized], th.Status[http.StatusTooManyRequests], benchLoginLimits.PerAddress
	pr := ratio(float64(during.Lat.P99), float64(base.Lat.P99))
	return []verdict{
		{"W10 hash verifications", fmt.Sprintf("%d (401 answers: %d)%s", verified, n401, errNote(a.Err)), fmt.Sprintf("≤ limiter budget (%d)", budget),
			a.Err == "" && verified <= uint64(budget) && n401 <= budget},
		{"W10 the rest are 429", fmt.Sprintf("%d of %d (answers: %v)", n429, th.Answered-n401, th.Status), fmt.Sprintf("all %d − 401s", attackN),
			th.Answered == attackN && n429 == attackN-n401},
		{"W10 429 carry no-store", fmt.Sprintf("%d of %d", th.NoStore, n429), "all", th.NoStore == n429},
		{"W10 W1 p99 during the attack", fmt.Sprintf("%.2f × baseline (%s vs %s)", pr, ms(during.Lat.P99), ms(base.Lat.P99)), "≤ 1.5 × baseline", pr <= 1.5},
		{"W10 W1 answers during the attack", fmt.Sprintf("%d non-200, %d errors%s", during.Non200, during.Errors, errNote(during.Err)),
			"0 non-200, 0 errors", during.Non200+during.Errors == 0 && during.OK > 0 && during.Err == ""}}, ctx.Err()
}

// stateOf is W1 with n workspaces registered, running of them started.
func stateOf(name string, n, running int, min float64) func(ctx context.Context, e *env) ([]verdict, error) {
	return func(ctx context.Context, e *env) ([]verdict, error) { return e.stateOf(ctx, name, n, running, min) }
}

func (e *env) stateOf(ctx context.Context, name string, n, running int, min float64) ([]verdict, error) {
	h, err := e.hub(ctx, n)
	if err != nil {
		return nil, err
	}
	for _, id := range h.ids[:running] {
		if err := h.w.lifecycle(ctx, id, "start"); err != nil {
			return nil, err
		}
		defer h.w.lifecycle(context.WithoutCancel(ctx), id, "stop")
	}
	probe, body, err := e.stateProbe(ctx, h.w)
	var st struct{ Workspaces []struct{ Running bool } }
	if err == nil {
		err = json.Unmarshal(body, &st)
	}
	if err == nil && len(st.Workspaces) != n {
		err = fmt.Errorf("%s: the state lists %d workspaces, want %d", name, len(st.Workspaces), n)
	}
	var rs *rounds
	if err == nil {
		rs, err = e.stateRounds(ctx, name, probe, h.state(name, bearer(h.w.session)))
	}
	if err != nil {
		return nil, err
	}
	_, _, end, err := call(ctx, h.w.addr, http.MethodGet, statePath, bearer(h.w.session), nil, nil)
	listed, same := 0, err == nil && bytes.Equal(end, body)
	for _, x := range st.Workspaces {
		listed += b2i(x.Running)
	}
	return append(stateVerdicts(rs, name, name+" W1", min), verdict{name + " answer", fmt.Sprintf("%d workspaces, %d running; the %d B "+
		"answer was %s after the runs", n, listed, len(body), map[bool]string{true: "byte-identical", false: "DIFFERENT"}[same]),
		fmt.Sprintf("%d running; unchanged during the runs", running), listed == running && same}), nil
}

// runW11 cycles a real session child, each cycle after a spawn and reap of
// the same binary (`version`), the floor a start cannot go below.
func runW11(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 1)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, w11Limit)
	defer cancel()
	w, id := h.w, h.ids[0]
	e.progress("W11: 1 warm-up and %d start/stop cycles", w11Cycles)
	fd0, fdBase, note := openFDs(), 0, ""
	var spawns, starts []time.Duration
	for i := range w11Cycles + 1 {
		t0 := time.Now()
		err := exec.CommandContext(ctx, e.bin, "version").Run()
		t1 := time.Now()
		if err == nil {
			err = w.lifecycle(ctx, id, "start")
		}
		if t2 := time.Now(); err == nil {
			spawns, starts, err = append(spawns, t1.Sub(t0)), append(starts, t2.Sub(t1)), w.lifecycle(ctx, id, "stop")
		}
		if err != nil {
			note = fmt.Sprintf("; stopped at cycle %d: %v", i, err)
			w.lifecycle(context.WithoutCancel(ctx), id, "stop")
			break
		}
		if i == 0 { // the warm-up
			spawns, starts, fdBase = nil, nil, openFDs()
		}
	}
	var kids []byte // the states (R, S, Z…) of this process's children; /proc/*/stat's fields follow the name's ')'
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			kids = append(kids, f[0][0])
		}
	}
	fds := openFDs()
	for settle := time.Now(); fds > fdBase && time.Since(settle) < 2*time.Second; fds = openFDs() {
		time.Sleep(20 * time.Millisecond)
	}
	sp, st := summarize(spawns), summarize(starts)
	return []verdict{
		{"W11 start p50", fmt.Sprintf("%s over %d cycles (%.1f × the spawn-and-reap p50 of %s; p90 %s, max %s)%s", ms(st.P50), st.N,
			ratio(float64(st.P50), float64(sp.P50)), ms(sp.P50), ms(st.P90), ms(st.Max), note), "≤ " + ms(w11MaxP50),
			note == "" && st.N > 0 && st.P50 <= w11MaxP50},
		{"W11 zombies afterwards", fmt.Sprintf("%d zombie(s), %d child process(es) left", strings.Count(string(kids), "Z"), len(kids)),
			"0 zombies, no child left", len(paths) > 0 && len(kids) == 0},
		{"W11 open fds afterwards", fmt.Sprintf("%d after the cycles, baseline %d (%d before the warm-up)", fds, fdBase, fd0), "= baseline",
			fdBase > 0 && fds == fdBase}}, nil
}

// openFDs counts this process's open descriptors, -1 without /proc.
func openFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries) - 1
}

// w9Name is client w's n-th name, as wrk.lua's BENCH_BODY makes it.
func w9Name(w, n int) string { return fmt.Sprintf("bench client %d %d", w, n) }

// runW9: 4 clients each rename their own workspace (a wrk thread each), beside
// raw SQLite (the same UPDATE, in process) and a minimal HTTP write probe.
func runW9(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 1+w9Clients)
	if err != nil {
		return nil, err
	}
	w, ids, dir := h.w, h.ids[1:1+w9Clients], filepath.Join(h.parent, "raw.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: dir}).EscapedPath()+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE workspaces (id TEXT PRIMARY KEY, path TEXT NOT NULL, display_name TEXT NOT NULL, auto_start INTEGER NOT NULL)`)
	paths := make([]string, len(ids))
	for i, id := range ids {
		if paths[i] = "/api/hub/workspaces/" + id + "/display-name"; err == nil {
			_, err = db.Exec(`INSERT INTO workspaces VALUES (?, ?, ?, 0)`, id, "/nowhere/"+id, id)
		}
	}
	rename := func(ctx context.Context, id, name string) error { // the write Wharf commits
		_, err := db.ExecContext(ctx, `UPDATE workspaces SET path = ?, display_name = ?, auto_start = ? WHERE id = ?`, "/nowhere/"+id, name, false, id)
		return err
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
	probe := ""
	if err == nil {
		probe, err = e.serve(w.d, mux)
	}
	if err != nil {
		return nil, err
	}
	env, hdr := []string{`BENCH_BODY={"displayName":"bench client %d %d"}`, "BENCH_PATHS=" + strings.Join(paths, " ")}, bearer(w.session)
	hdr.Set("Content-Type", "application/json")
	rs, err := e.rounds(ctx, "W9: raw SQLite, HTTP write probe, Wharf", []int{w9Clients},
		target{name: "raw SQLite", call: func(ctx context.Context, w, n int) (int, error) { return 200, rename(ctx, ids[w], w9Name(w, n)) }},
		target{name: "HTTP write probe", addr: probe, hdr: http.Header{"Content-Type": hdr["Content-Type"]}, env: env, threads: w9Clients},
		target{name: "Wharf", addr: w.addr, hdr: hdr, env: env, threads: w9Clients})
	if err != nil {
		return nil, err
	}
	// Every write landed: each workspace holds the name of its client's
	// last 200, or of the request wrk left in flight when it stopped.
	var st struct {
		Workspaces []struct{ ID, DisplayName string }
	}
	_, _, _, err = call(ctx, w.addr, http.MethodGet, statePath, bearer(w.session), nil, &st)
	th, kept := rs.last[2].Threads, 0
	for _, x := range st.Workspaces {
		if i := slices.Index(ids, x.ID); i >= 0 && i < len(th) {
			kept += b2i(x.DisplayName == w9Name(i, th[i].LastOK) || th[i].Sent > th[i].Answered && x.DisplayName == w9Name(i, th[i].Sent-1))
		}
	}
	med := func(k int, f func(run) float64) float64 { return rs.medRun(0, k, f) }
	p99 := func(x run) float64 { return float64(x.Lat.P99) }
	list := func(f func(run) string) string { return rs.list(0, func(x []run) string { return f(x[2]) }) }
	wp99, wrate := time.Duration(med(2, p99)), med(2, run.RPS)
	non200, errs, _ := rs.answers(0, 2)
	return []verdict{
		{"W9 display-name p99, 4 clients", fmt.Sprintf("%s (%s); raw SQLite write p99 %s, HTTP write probe p99 %s (Wharf = %.1f × probe)",
			ms(wp99), list(func(x run) string { return ms(x.Lat.P99) }), ms(time.Duration(med(0, p99))), ms(time.Duration(med(1, p99))),
			ratio(float64(wp99), med(1, p99))), fmt.Sprintf("≤ %s (absolute)", ms(w9MaxP99)), wp99 <= w9MaxP99},
		{"W9 mutations/s, 4 clients", fmt.Sprintf("%.0f/s (%s) = %.2f × raw SQLite writes (%.0f/s), %.2f × HTTP write probe (%.0f/s)", wrate,
			list(func(x run) string { return rps(x.RPS()) }), ratio(wrate, med(0, run.RPS)), med(0, run.RPS), ratio(wrate, med(1, run.RPS)),
			med(1, run.RPS)), fmt.Sprintf("≥ %.0f/s (absolute)", w9MinRate), wrate >= w9MinRate},
		{"W9 answers", fmt.Sprintf("%d non-200, %d errors; %d of %d workspaces hold their client's last name%s", non200, errs, kept,
			w9Clients, errNote(fmt.Sprint(err))), "0 non-200, 0 errors, every write landed", non200 == 0 && errs == 0 && kept == w9Clients}}, nil
}

// runCrash is cmd/wharf's TestCrashLoad at 50 kills, judged absolutely:
// nothing acknowledged lost, no journal left pending.
func runCrash(ctx context.Context, e *env) ([]verdict, error) {
	dir, err := mkTemp(e, "wharf-crash-")
	if err = cmp.Or(err, e.buildChild(ctx)); err != nil {
		return nil, err
	}
	f, err := daemontest.CrashLoad(ctx, daemontest.CrashConfig{Binary: e.bin, Dir: dir, Kills: 50, Writers: 2})
	// Judged as TestCrashLoad judges it: refusals and problems (a daemon
	// that exited on its own, an ERROR log line, a hung request or stop)
	// fail the run too.
	return []verdict{{Name: "crash: acknowledged writes after SIGKILLs", Target: "≥ 20 kills; lost, unexpected, pending, refused and problems 0",
		Figure: fmt.Sprintf("%d kills, %d acknowledged writes (%d cut by a kill, %d of them landed), lost %d, unexpected %d, journals recovered %d, pending %d, refused %d, problems %d, in %s",
			f.Kills, f.AckedTotal(), f.Cut, f.Landed, f.Lost, f.Unexpected, f.Recovered, f.Pending, f.Refused, len(f.Problems), f.Elapsed.Round(time.Second)),
		OK: err == nil && f.Kills >= 20 && f.Lost == 0 && f.Unexpected == 0 && f.Pending == 0 && f.Refused == 0 && len(f.Problems) == 0}}, err
}
