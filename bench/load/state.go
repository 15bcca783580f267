package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The state workloads: GET /api/hub/state against Wharf and against a
// probe answering the same bytes, side by side in rounds.

const statePath = "/api/hub/state"

// stateProbe captures w's state answer, head and body, and serves exactly
// those bytes from a minimal net/http handler: the baseline.
func (e *env) stateProbe(ctx context.Context, w *wharf) (*server, []byte, error) {
	status, h, body, err := call(ctx, w.addr, http.MethodGet, statePath, bearer(w.session), nil, nil)
	if err != nil || status != http.StatusOK {
		return nil, nil, fmt.Errorf("state: %d %s %v", status, body, err)
	}
	h.Del("Date") // the server writes its own
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+statePath, func(rw http.ResponseWriter, _ *http.Request) { maps.Copy(rw.Header(), h); rw.Write(body) })
	srv, err := e.serve(w.d, mux)
	return srv, body, err
}

// stateRounds runs, in rounds at every -conns, the probe driven as each
// of ts is (by wrk or the load generator), then ts.
func (e *env) stateRounds(ctx context.Context, label string, probe *server, ts ...target) (*rounds, error) {
	var all []target
	for _, wrk := range []bool{true, false} {
		for _, t := range ts {
			if t.wrk == wrk {
				all = append(all, target{name: "probe" + map[bool]string{true: " (wrk)"}[wrk], srv: probe, path: statePath, wrk: wrk})
				break
			}
		}
	}
	return e.rounds(ctx, label, e.cfg.conns, append(all, ts...)...)
}

// byWrk drives t with wrk when wrk is there (then named "… (wrk)").
func (e *env) byWrk(t target) target {
	if t.wrk = e.wrk != ""; t.wrk {
		t.name += " (wrk)"
	}
	return t
}

// stateSection judges target name of rs against the probe driven the
// same way, at every concurrency: throughput ≥ min × probe's, p99 ≤ 2 ×
// probe's + 1 ms, only 200s; and writes the section.
func stateSection(title, label, name string, min float64, rs *rounds, body []byte, text ...string) *section {
	j, p := rs.index(name), rs.index("probe"+map[bool]string{true: " (wrk)"}[strings.HasSuffix(name, "(wrk)")])
	t := newTable("conns", "probe req/s", label+" req/s", "throughput ratio", "probe p99", label+" p99", "p99 / limit",
		"server CPU/req: probe", label, "non-200 / errors", "verdict")
	s, cost := &section{title: title, tables: []*table{t}}, []string(nil)
	for c, n := range rs.conns {
		f2 := func(f func([]run) float64) func([]run) string {
			return func(x []run) string { return fmt.Sprintf("%.2f", f(x)) }
		}
		tr := func(x []run) float64 { return ratio(x[j].RPS(), x[p].RPS()) }
		pr := func(x []run) float64 { return ratio(float64(x[j].Lat.P99), float64(2*x[p].Lat.P99+time.Millisecond)) }
		cpuOf := func(k int) time.Duration {
			return time.Duration(rs.medRun(c, k, func(x run) float64 { return float64(x.perReq(x.Server)) }))
		}
		cpu := func(k int) string { return us(cpuOf(k)) }
		cost = append(cost, fmt.Sprintf("%s against %s at %d conns (%s more)", cpu(j), cpu(p), n, us(cpuOf(j)-cpuOf(p))))
		p99 := func(k int) string {
			return ms(time.Duration(rs.medRun(c, k, func(x run) float64 { return float64(x.Lat.P99) })))
		}
		tm, pm := rs.med(c, tr), rs.med(c, pr)
		non200, errs, ok := rs.answers(c, j)
		s.verdicts = append(s.verdicts,
			verdict{fmt.Sprintf("%s throughput, %d conns", label, n), fmt.Sprintf("%.2f × probe (%s); server CPU/req %s, probe %s",
				tm, rs.list(c, f2(tr)), cpu(j), cpu(p)), fmt.Sprintf("≥ %.2f × probe", min), tm >= min},
			verdict{fmt.Sprintf("%s p99, %d conns", label, n), fmt.Sprintf("%.2f × limit (%s)", pm, rs.list(c, f2(pr))),
				"≤ 1 × limit, limit = 2 × probe p99 + 1 ms", pm <= 1},
			verdict{fmt.Sprintf("%s answers, %d conns", label, n), fmt.Sprintf("%d non-200, %d errors", non200, errs),
				"0 non-200, 0 errors", non200 == 0 && errs == 0 && ok})
		t.add(n, rps(rs.medRun(c, p, run.RPS)), rps(rs.medRun(c, j, run.RPS)), fmt.Sprintf("%.2f", tm), p99(p), p99(j), fmt.Sprintf("%.2f", pm),
			cpu(p), cpu(j), fmt.Sprintf("%d / %d", non200, errs), passFail(tm >= min && pm <= 1 && non200 == 0 && errs == 0 && ok))
	}
	s.reading = []string{fmt.Sprintf("%s: the server's CPU per answer, Wharf's against the probe's: %s. The difference is Wharf's own work "+
		"beyond net/http serving the same bytes: routing, authentication, the state answer.", label, strings.Join(cost, "; "))}
	every, note := rs.everyRun()
	s.text = append(text, fmt.Sprintf("Targets: throughput ≥ %.2f × probe; p99 ≤ 2 × probe p99 + 1 ms; 0 non-200. The probe answers "+
		"the exact bytes, head and body, of Wharf's answer, captured once before the runs (%d B); %s drove these runs.", min, len(body),
		map[bool]string{true: "wrk", false: "the load generator"}[strings.HasSuffix(name, "(wrk)")]))
	s.tables, s.after = append(s.tables, every), []string{note}
	return s
}

// emptyHub is the "empty" group: a Wharf with no workspace, the probe of
// its state answer, and W1's and W2's rounds, made once for both.
type emptyHub struct {
	w      *wharf
	probe  *server
	body   []byte
	rounds *rounds
	w1, w2 target
}

func (e *env) emptyGroup(ctx context.Context) (*emptyHub, error) {
	if e.empty != nil {
		return e.empty, nil
	}
	w, err := e.openWharf(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	h := &emptyHub{w: w}
	_, cookie, err := w.login(ctx, "bench cookie")
	if err == nil {
		h.probe, h.body, err = e.stateProbe(ctx, w)
	}
	h.w1 = e.byWrk(target{name: "W1", srv: w.server, path: statePath, hdr: bearer(w.session)})
	h.w2 = target{name: "W2", srv: w.server, path: statePath, hdr: w.browser(cookie, "http://"+w.addr, "same-origin")}
	e.empty = h
	return h, err
}

func runW1(ctx context.Context, e *env) (*section, error) {
	h, err := e.emptyGroup(ctx)
	if err != nil {
		return nil, err
	}
	ts := []target{h.w1}
	if e.cfg.has("w2") {
		ts = append(ts, h.w2)
	}
	if h.rounds, err = e.stateRounds(ctx, "probe, W1, W2", h.probe, ts...); err != nil {
		return nil, err
	}
	s := stateSection("W1: bearer `GET /api/hub/state` on a Hub with no workspace", "W1", h.w1.name, 0.80, h.rounds, h.body,
		fmt.Sprintf("Wharf's answer: `%s`.", bytes.TrimSpace(h.body)))
	return s, nil
}

func runW2(ctx context.Context, e *env) (*section, error) {
	h, err := e.emptyGroup(ctx)
	if err != nil {
		return nil, err
	}
	rs := h.rounds
	if rs == nil || rs.index("W2") < 0 {
		if rs, err = e.stateRounds(ctx, "probe, W2", h.probe, h.w2); err != nil {
			return nil, err
		}
	}
	s := stateSection("W2: cookie `GET /api/hub/state` (`Cookie`, `Origin`, `Sec-Fetch-Site: same-origin`)", "W2", "W2", 0.45, rs, h.body)
	if rs == h.rounds {
		s.tables, s.after = s.tables[:1], nil // its runs are in W1's table
	}
	if e.cfg.crossOriginN == 0 {
		return s, nil
	}
	// The cross-origin oracle: cookie-authenticated revocations of the
	// session itself from foreign origins must all be 403.
	w := h.w
	id, cookie, err := w.login(ctx, "bench cross-origin")
	var list struct {
		Sessions []struct {
			Handle  string
			Current bool
		}
	}
	if err == nil {
		_, _, _, err = call(ctx, w.addr, http.MethodGet, "/api/hub/sessions", bearer(id), nil, &list)
	}
	handle := ""
	for _, x := range list.Sessions {
		if x.Current {
			handle = x.Handle
		}
	}
	variants := []http.Header{w.browser(cookie, "http://evil.example", "cross-site"), w.browser(cookie, "http://evil.example", "same-origin"),
		w.browser(cookie, "http://"+w.addr, "cross-site"), w.browser(cookie, "http://127.0.0.1:1", "same-site")}
	forbidden, other := 0, map[int]int{}
	for i := 0; i < e.cfg.crossOriginN && err == nil; i++ {
		var status int
		status, _, _, err = call(ctx, w.addr, http.MethodPost, "/api/hub/sessions/"+handle+"/revoke", variants[i%4], nil, nil)
		if status == http.StatusForbidden {
			forbidden++
		} else {
			other[status]++
		}
	}
	alive, _, _, _ := call(ctx, w.addr, http.MethodGet, statePath, bearer(id), nil, nil)
	s.verdicts = append(s.verdicts, verdict{"W2 cross-origin state change", fmt.Sprintf("%d/%d answered 403 (others: %v); the session "+
		"answers %d afterwards", forbidden, e.cfg.crossOriginN, other, alive), "100 % 403, session untouched",
		forbidden == e.cfg.crossOriginN && alive == http.StatusOK})
	s.after = append(s.after, "Cross-origin oracle: cookie-authenticated `POST /api/hub/sessions/{own handle}/revoke`, rotating "+
		"four foreign variants (foreign Origin with `cross-site`, and with `same-origin`; own Origin with `cross-site`; same host, "+
		"other port with `same-site`).")
	return s, err
}

// runW10 runs a W1 baseline of the attack's length and concurrency, then
// W1 again with -attack-attempts wrong-password logins from one client,
// spread over -attack-over, in its window.
func runW10(ctx context.Context, e *env) (*section, error) {
	h, err := e.emptyGroup(ctx)
	if err != nil {
		return nil, err
	}
	c, w1 := e.cfg, h.w1
	w1.wrk, w1.name = false, "W1" // the attack starts with the window, which the load generator reports
	var base run
	for a := 0; a <= c.retries && (a == 0 || base.Others > c.maxOthers); a++ {
		e.progress("W10 baseline: W1 at %d conns for %s (attempt %d)", c.attackConns, c.attackOver, a+1)
		if b := e.measure(ctx, w1, c.attackConns, c.attackOver, nil); a == 0 || b.Others < base.Others {
			base = b
		}
	}
	e.progress("W10: %d wrong passwords over %s while W1 runs", c.attackN, c.attackOver)
	hub, status, noStore := h.w.d.Hub(), make([]int, c.attackN), make([]bool, c.attackN)
	v0 := hub.PasswordVerifications()
	var wg sync.WaitGroup
	during := e.measure(ctx, w1, c.attackConns, c.attackOver, func() {
		wg.Go(func() {
			for i, start := 0, time.Now(); i < c.attackN && waitUntil(ctx, start.Add(time.Duration(i)*c.attackOver/time.Duration(c.attackN))); i++ {
				wg.Go(func() {
					st, hd, _, err := call(ctx, h.w.addr, http.MethodPost, "/login", nil,
						map[string]string{"name": benchUser, "password": "not the password", "deviceLabel": "bench attacker"}, nil)
					if err == nil {
						status[i], noStore[i] = st, hd.Get("Cache-Control") == "no-store"
					}
				})
			}
		})
	})
	wg.Wait()
	verified, n401, n429, stored := hub.PasswordVerifications()-v0, 0, 0, 0
	for i, st := range status {
		n401, n429, stored = n401+b2i(st == http.StatusUnauthorized), n429+b2i(st == http.StatusTooManyRequests), stored+b2i(st == http.StatusTooManyRequests && noStore[i])
	}
	budget, pr := benchLoginLimits.PerAddress, ratio(float64(during.Lat.P99), float64(base.Lat.P99))
	return &section{title: "W10: login abuse during W1", text: []string{fmt.Sprintf("W1 at %d connections: %s req/s (p99.9 %s) during the "+
		"attack, %s (p99.9 %s) in the baseline just before; the limiter allows %d failures per address per %s.", c.attackConns,
		rps(during.RPS()), ms(during.Lat.P999), rps(base.RPS()), ms(base.Lat.P999), budget, benchLoginLimits.AddressWindow)}, verdicts: []verdict{
		{"W10 hash verifications", fmt.Sprintf("%d (401 answers: %d)", verified, n401), fmt.Sprintf("≤ limiter budget (%d)", budget),
			verified <= uint64(budget) && n401 <= budget},
		{"W10 the rest are 429", fmt.Sprintf("%d of %d (other answers or errors: %d)", n429, c.attackN-n401, c.attackN-n401-n429),
			fmt.Sprintf("all %d − 401s", c.attackN), n429 == c.attackN-n401},
		{"W10 429 carry no-store", fmt.Sprintf("%d of %d", stored, n429), "all", stored == n429},
		{"W10 W1 p99 during the attack", fmt.Sprintf("%.2f × baseline (%s vs %s)", pr, ms(during.Lat.P99), ms(base.Lat.P99)),
			"≤ 1.5 × baseline", pr <= 1.5},
		{"W10 W1 answers during the attack", fmt.Sprintf("%d non-200, %d errors%s", during.Non200, during.Errors, errNote(during.Err)),
			"0 non-200, 0 errors", during.Non200+during.Errors == 0 && during.OK > 0 && during.Err == ""}}}, ctx.Err()
}
