package main

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// This file writes the sections of the workloads run against the Wharf
// with no workspace (W2's oracle, W10, the diagnosis) and the closing
// reading of the figures.

func otherStatuses(a attackResult) string {
	var parts []string
	for s, n := range a.ByStatus {
		if s != 401 && s != 429 {
			parts = append(parts, fmt.Sprintf("%d×%d", n, s))
		}
	}
	if a.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d transport errors", a.Errors))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// w10Verdicts judges W10; r.Attack must be set.
func (r *report) w10Verdicts() []verdict {
	a := r.Attack
	n401, n429 := a.ByStatus[401], a.ByStatus[429]
	pr := ratio(float64(r.During.Lat.P99), float64(r.Baseline.Lat.P99))
	return []verdict{
		{"W10 hash verifications", fmt.Sprintf("%d (401 answers: %d)", a.Verifications, n401),
			fmt.Sprintf("≤ limiter budget (%d)", r.Budget), a.Verifications <= uint64(r.Budget) && n401 <= r.Budget},
		{"W10 the rest are 429", fmt.Sprintf("%d of %d (other: %s)", n429, a.Attempts-n401, otherStatuses(*a)),
			fmt.Sprintf("all %d − 401s", a.Attempts), n429 == a.Attempts-n401 && a.Errors == 0},
		{"W10 429 carry no-store", fmt.Sprintf("%d of %d", a.NoStore429, n429), "all", a.NoStore429 == n429},
		{"W10 W1 p99 during the attack", fmt.Sprintf("%.2f × baseline (%s vs %s)", pr, ms(r.During.Lat.P99), ms(r.Baseline.Lat.P99)),
			fmt.Sprintf("≤ %.1f × baseline", attackP99Factor), pr <= attackP99Factor},
		{"W10 W1 answers during the attack", fmt.Sprintf("%d non-200, %d errors", r.During.Non200, r.During.Errors),
			"0 non-200, 0 errors", r.During.Non200 == 0 && r.During.Errors == 0 && r.During.OK > 0},
	}
}

func (b *mdWriter) crossOrigin(co *crossOriginResult) {
	p := b.p
	p("### W2 cross-origin oracle\n\n")
	p("%d cookie-authenticated `POST /api/hub/sessions/{own handle}/revoke` requests, rotating four foreign variants "+
		"(foreign Origin + `cross-site`; foreign Origin + `same-origin`; own Origin + `cross-site`; same host, other port + `same-site`): "+
		"**%d answered 403** (other statuses: %s); the session was %s afterwards. ", co.Requests, co.Forbidden, statusCounts(co.Other),
		map[bool]string{true: "still active", false: "revoked"}[co.StillActive])
	p("A cross-origin cookie `GET /api/hub/state` answered %d: by the spec (rule 5 of Authentication, architecture.md CSRF) only "+
		"state-changing cookie requests and the live stream are origin-checked, so a GET is expected to pass.\n\n", co.GetStatus)
}

func (r *report) w10Section(b *mdWriter) {
	p := b.p
	a := r.Attack
	p("## W10: login abuse during W1\n\n")
	p("%d `POST /login` with the right user name (`%s`) and a wrong password, from one client (127.0.0.1), one every %s "+
		"(open loop) over %s, while W1 runs at %d connections. The baseline is a W1 run of the same length and concurrency "+
		"just before, in the same process. Limiter: %d failures per address per %s, %d per name per %s (hub's defaults); "+
		"the attack's %s fits in one address window, so its budget is **%d** verifications.\n\n",
		a.Attempts, benchUser, (a.Over / time.Duration(a.Attempts)).Round(time.Millisecond), a.Over, r.Cfg.attackConns,
		benchLoginLimits.PerAddress, benchLoginLimits.AddressWindow, benchLoginLimits.PerName, benchLoginLimits.NameWindow, a.Over, r.Budget)
	p("| figure | value |\n|---|---|\n")
	p("| answers 401 / 429 / other | %d / %d / %s |\n", a.ByStatus[401], a.ByStatus[429], otherStatuses(*a))
	p("| password hash verifications caused (`PasswordVerifications` delta) | %d |\n", a.Verifications)
	p("| 429 answers with `Cache-Control: no-store` | %d of %d |\n", a.NoStore429, a.ByStatus[429])
	p("| login latency p50 / max, 401 (hashed) | %s / %s |\n", ms(a.Lat401.P50), ms(a.Lat401.Max))
	p("| login latency p50 / max, 429 (refused before hashing) | %s / %s |\n", ms(a.Lat429.P50), ms(a.Lat429.Max))
	p("| attack wall time | %s |\n\n", a.Elapsed.Round(time.Millisecond))
	p("| W1 at %d conns | req/s | p50 | p90 | p99 | p99.9 | max | non-200 / errors | other procs |\n|---|---|---|---|---|---|---|---|---|\n", r.Cfg.attackConns)
	for _, x := range []struct {
		name string
		res  runResult
	}{{"baseline", r.Baseline}, {"during attack", r.During}} {
		p("| %s | %s | %s | %s | %s | %s | %s | %d / %d | %s |\n", x.name, rps(x.res.RPS()), ms(x.res.Lat.P50), ms(x.res.Lat.P90),
			ms(x.res.Lat.P99), ms(x.res.Lat.P999), ms(x.res.Lat.Max), x.res.Non200, x.res.Errors, pct(x.res.Others))
	}
	p("\nRatios during/baseline: throughput %.2f, p99 %.2f (target ≤ %.1f), p99.9 %.2f.\n\n",
		ratio(r.During.RPS(), r.Baseline.RPS()), ratio(float64(r.During.Lat.P99), float64(r.Baseline.Lat.P99)), attackP99Factor,
		ratio(float64(r.During.Lat.P999), float64(r.Baseline.Lat.P999)))
}

// diagnosis attributes W1's per-request cost, when its runs were made.
func (r *report) diagnosis(b *mdWriter) {
	if r.Unauth == nil && len(r.Auth) == 0 {
		return
	}
	p := b.p
	p("## Diagnosis: where Wharf's per-request cost goes (empty Hub)\n\n")
	p("CPU/req is the whole process's CPU time per answer (load generator included), median over rounds:\n\n")
	p("| conns | probe | W1 | W2 | W1 − probe |\n|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		pc, w1c, w2c := row.medianOf(probeOf, cpuOf), row.medianOf(workloads[0].Pick, cpuOf), row.medianOf(workloads[1].Pick, cpuOf)
		w2s := "—" // W2 not run
		if r.Cfg.has("w2") {
			w2s = us(time.Duration(w2c))
		}
		p("| %d | %s | %s | %s | %s |\n", row.Conns, us(time.Duration(pc)), us(time.Duration(w1c)), w2s, us(time.Duration(w1c-pc)))
	}
	p("\n")
	if u := r.Unauth; u != nil {
		p("- Wharf without credentials (`GET /api/hub/state` → 401: the same server, path check, mux, dispatch and JSON writer, "+
			"but no session lookup) at %d conns: %s req/s, p99 %s, CPU/req %s", u.Conns, rps(u.RPS()), ms(u.Lat.P99), us(u.CPUPerRequest()))
		for _, row := range r.Rows {
			if row.Conns == u.Conns {
				p(" (%.2f × the median probe throughput at that concurrency)", ratio(u.RPS(), row.medianOf(probeOf, runResult.RPS)))
			}
		}
		p(".\n")
	}
	for _, d := range r.Auth {
		p("- `hub.Authenticate` called in-process from %d goroutine(s): %s per call, %.0f calls/s, %d errors.\n",
			d.Goroutines, us(d.PerCall()), d.PerSecond(), d.Errors)
	}
	if d := r.StateCall; d != nil {
		p("- `hub.State` called in-process from 1 goroutine (no HTTP, no JSON; one read transaction for the registry and "+
			"the default-parent setting): %s per call, %.0f calls/s, %d errors.\n", us(d.PerCall()), d.PerSecond(), d.Errors)
	}
	for _, d := range r.SQL {
		p("- The session lookup on the same database file, %s: %s per call (%d calls, %d errors).\n", d.Name, us(d.PerCall()), d.Ops, d.Errors)
	}
	p("\n")
}

// reading closes the report: what was missed, where the time goes, and
// the caveats.
func (r *report) reading(b *mdWriter) {
	p := b.p
	m := r.Machine
	p("## Reading these figures\n\n")
	missed := []string{}
	for _, v := range r.verdicts() {
		if !v.OK {
			missed = append(missed, v.Name)
		}
	}
	if len(missed) == 0 {
		p("Every target was met in this run.\n\n")
	} else {
		p("Missed in this run: %s.\n\n", strings.Join(missed, "; "))
	}
	if r.Cfg.has("w1") && len(r.Auth) > 0 {
		p("Where Wharf's time goes on the empty Hub: the only work an authenticated `GET /api/hub/state` does beyond the probe is " +
			"the path check, the dispatch, a JSON encode with three headers, `hub.Authenticate`, which runs one SQLite read " +
			"transaction (BEGIN, an unprepared `SELECT … FROM sessions WHERE digest = ?`, COMMIT) through `database/sql` and " +
			"`modernc.org/sqlite` on every request, and `hub.State`'s own read transaction (the registry and the default-parent setting).")
		p(" In this run `hub.Authenticate` cost %s per call on one goroutine", us(r.Auth[0].PerCall()))
		if d := r.StateCall; d != nil {
			p(", `hub.State` %s", us(d.PerCall()))
		}
		if r.Unauth != nil {
			p(", and Wharf answering 401 (everything but the lookup and the state) used %s CPU/req", us(r.Unauth.CPUPerRequest()))
		}
		p(".")
		if len(r.SQL) == 3 {
			a, b, c := r.SQL[0].PerCall(), r.SQL[1].PerCall(), r.SQL[2].PerCall()
			p(" The same lookup costs %s as Wharf runs it, %s without the transaction and %s as a prepared statement without "+
				"a transaction: the transaction accounts for %s, preparing the statement for %s. Preparing the statement "+
				"while keeping the transaction, which the Store port's unit of work requires, was tried earlier and gained "+
				"nothing measurable (`BenchmarkSessionLookup` in adapters/sqlite). A short-lived in-memory cache of active "+
				"sessions would remove the lookup, but must still see revocations made by `wharf user` in another process.",
				us(a), us(b), us(c), us(a-b), us(b-c))
		}
		p("\n\n")
	}
	r.workspaceReading(b)
	if r.Live != nil {
		r.Live.reading(b, m.NumCPU)
	}
	if !math.IsNaN(r.Others) && r.Others > 0.05 {
		p("Other processes used %s of the machine's CPU during this run (see “other procs” per run), so some figures carry "+
			"outside noise; the per-round ratios show how much.\n\n", pct(r.Others))
	}
	p("Caveats that apply to every figure:\n\n")
	p("- The load generator shares the %d CPU(s), the Go scheduler and the garbage collector with both servers. Its cost per "+
		"request is about the same for the probe and for Wharf, so it fills part of each request's CPU budget and pulls the "+
		"throughput ratio toward 1 (Wharf's own cost relative to the probe is larger than the ratio shows); the W1 p99 "+
		"figures include time spent waiting for the client's goroutines.\n", m.NumCPU)
	p("- Go's `net/http` client costs more per request than wrk, so absolute req/s are below anchors.md §2.2's wrk figures; " +
		"only the ratios are meant to be compared across machines.\n")
	if len(r.StateBody) > 0 {
		p("- W1 and W2 run against a Hub with no workspace (a %d B answer); the 50-workspace form of anchors.md §2.4 is the "+
			"state50 workload, against the second Wharf.\n", len(r.StateBody))
	}
	p("- p99 at 1 connection is a fraction of a millisecond, so the +1 ms slack dominates that limit; at 50 connections "+
		"on %d CPUs, p99 is mostly queueing behind other connections and varies by tens of percent between runs.\n", m.NumCPU)
	if r.Attack != nil {
		p("- W10's hashes happen in the attack's first second (the budget is spent at once); after that every attempt is a " +
			"cheap 429, so the W1 p99 over the whole window mostly reflects the refused attempts. p99.9 and max show the hashes.\n")
	}
}
