package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Targets (issue text; W2's throughput floor from anchors.md §2.4).
const (
	w1MinThroughput = 0.50
	w2MinThroughput = 0.45
	p99Factor       = 2.0
	p99Slack        = time.Millisecond
	attackP99Factor = 1.5
)

// report is everything one run measured.
type report struct {
	Started     time.Time
	Args        []string
	Elapsed     time.Duration
	Cfg         config
	Machine     machine
	StateBody   []byte
	Rows        []concRow
	CrossOrigin *crossOriginResult
	Unauth      *runResult
	Auth        []authDiag
	SQL         []sqlDiag
	Baseline    runResult
	During      runResult
	Attack      attackResult
	Budget      int
	LoadStart   string  // /proc/loadavg when the run began
	LoadEnd     string  // and when it ended
	Others      float64 // share of the machine's CPU other processes used during the whole run; NaN if unknown
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

// p99Limit is the W1/W2 latency target for a probe p99.
func p99Limit(probe time.Duration) time.Duration {
	return time.Duration(p99Factor*float64(probe)) + p99Slack
}

// verdict is one target's outcome.
type verdict struct {
	Name   string
	Figure string
	Target string
	OK     bool
}

func (r *report) verdicts() []verdict {
	var vs []verdict
	mo := r.Cfg.maxOthers
	for _, wl := range workloads {
		for _, all := range r.Rows {
			row := all.clean(mo)
			tr := median(row.throughputRatios(wl))
			pr := median(row.p99Ratios(wl))
			ok, non200, errs := all.answers(wl)
			trOf := func(x pairRow) float64 { return ratio(wl.Pick(x).RPS(), x.Probe.RPS()) }
			prOf := func(x pairRow) float64 {
				return ratio(float64(wl.Pick(x).Lat.P99), float64(p99Limit(x.Probe.Lat.P99)))
			}
			vs = append(vs,
				verdict{fmt.Sprintf("%s throughput, %d conns", wl.Name, all.Conns),
					fmt.Sprintf("%.2f × probe (%s; rounds: %s)", tr, all.basis(mo), all.roundList(trOf, mo)),
					fmt.Sprintf("≥ %.2f × probe", wl.Min), tr >= wl.Min},
				verdict{fmt.Sprintf("%s p99, %d conns", wl.Name, all.Conns),
					fmt.Sprintf("%.2f × limit (%s; rounds: %s)", pr, all.basis(mo), all.roundList(prOf, mo)),
					"≤ 1 × limit, limit = 2 × probe p99 + 1 ms", pr <= 1},
				verdict{fmt.Sprintf("%s answers, %d conns", wl.Name, row.Conns),
					fmt.Sprintf("%d non-200, %d errors", non200, errs), "0 non-200, 0 errors",
					non200 == 0 && errs == 0 && ok > 0})
		}
	}
	if co := r.CrossOrigin; co != nil {
		vs = append(vs, verdict{"W2 cross-origin state change",
			fmt.Sprintf("%d/%d answered 403; session %s", co.Forbidden, co.Requests, map[bool]string{true: "still active", false: "REVOKED"}[co.StillActive]),
			"100 % 403, session untouched", co.Forbidden == co.Requests && co.StillActive})
	}
	a := r.Attack
	n401, n429 := a.ByStatus[401], a.ByStatus[429]
	vs = append(vs,
		verdict{"W10 hash verifications", fmt.Sprintf("%d (401 answers: %d)", a.Verifications, n401),
			fmt.Sprintf("≤ limiter budget (%d)", r.Budget), a.Verifications <= uint64(r.Budget) && n401 <= r.Budget},
		verdict{"W10 the rest are 429", fmt.Sprintf("%d of %d (other: %s)", n429, a.Attempts-n401, otherStatuses(a)),
			fmt.Sprintf("all %d − 401s", a.Attempts), n429 == a.Attempts-n401 && a.Errors == 0},
		verdict{"W10 429 carry no-store", fmt.Sprintf("%d of %d", a.NoStore429, n429), "all", a.NoStore429 == n429},
	)
	pr := ratio(float64(r.During.Lat.P99), float64(r.Baseline.Lat.P99))
	vs = append(vs,
		verdict{"W10 W1 p99 during the attack", fmt.Sprintf("%.2f × baseline (%s vs %s)", pr, ms(r.During.Lat.P99), ms(r.Baseline.Lat.P99)),
			fmt.Sprintf("≤ %.1f × baseline", attackP99Factor), pr <= attackP99Factor},
		verdict{"W10 W1 answers during the attack", fmt.Sprintf("%d non-200, %d errors", r.During.Non200, r.During.Errors),
			"0 non-200, 0 errors", r.During.Non200 == 0 && r.During.Errors == 0 && r.During.OK > 0},
	)
	return vs
}

// statusCounts renders a status histogram, "none" when empty.
func statusCounts(m map[int]int) string {
	var parts []string
	for s, n := range m {
		parts = append(parts, fmt.Sprintf("%d×%d", n, s))
	}
	if len(parts) == 0 {
		return "none"
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

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

func (r *report) allPass() bool {
	for _, v := range r.verdicts() {
		if !v.OK {
			return false
		}
	}
	return true
}

// verdictLines is the short summary printed at the end of a run.
func (r *report) verdictLines() []string {
	var out []string
	for _, v := range r.verdicts() {
		out = append(out, fmt.Sprintf("%-4s %s: %s (target %s)", strings.Trim(passFail(v.OK), "*"), v.Name, v.Figure, v.Target))
	}
	return out
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}

func rps(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.0f", x)
}

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	m := r.Machine
	p("# Wharf load benchmark results\n\n")
	p("Generated by `go run ./bench/load %s` (the command `just bench` runs) on %s; the run took %s. "+
		"Running it again overwrites this file; every figure below is from that one run on this machine.\n\n",
		strings.Join(r.Args, " "), r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Elapsed.Round(time.Second))

	p("## Machine\n\n| | |\n|---|---|\n")
	p("| CPU | %s |\n| Logical CPUs (/proc/cpuinfo, runtime.NumCPU) | %d, %d |\n| GOMAXPROCS | %d |\n", m.CPU, m.Logical, m.NumCPU, m.GOMAXPROCS)
	p("| Go | %s %s |\n| Kernel | %s |\n| Memory | %s |\n", m.Go, m.OSArch, m.Kernel, m.Memory)
	p("| Load average (1, 5, 15 min) at start / end | %s / %s |\n", r.LoadStart, r.LoadEnd)
	p("| CPU used by other processes during the run | %s of the machine |\n\n", pct(r.Others))

	p("## Method\n\n")
	p("- One process holds the load generator, the **probe** (a minimal `net/http` handler: ServeMux route, " +
		"`Content-Type` header, a pre-serialized body) and **Wharf** (`hub.Hub` over `adapters/sqlite` and " +
		"`adapters/osfs` in a fresh 0700 temp dir, `httpapi.NewHandler`, `http.Server` configured as in " +
		"`cmd/wharf/serve.go`, default argon2id cost), each on its own `127.0.0.1:0` listener.\n")
	p("- The probe answers the exact bytes of Wharf's state answer (%d B: `%s`).\n", len(r.StateBody), strings.TrimSpace(string(r.StateBody)))
	p("- Closed loop: each connection is one goroutine with its own keep-alive `http.Transport` (one connection), "+
		"sending the next request as soon as the previous body is read. Each run: %s warm-up (discarded), then %s measured; "+
		"every request started in the window is recorded (latency = send to body read). Throughput = answers started in the window / window.\n",
		r.Cfg.warmup, r.Cfg.duration)
	p("- Servers are driven one at a time: at each concurrency the probe, then W1, then W2; all concurrencies make a round, "+
		"and %d rounds run back to back. The only overlap is W10's attack, which runs inside a W1 run against Wharf.\n", r.Cfg.rounds)
	p("- Percentiles by nearest rank over every recorded latency. CPU/req = process CPU time (getrusage: load generator " +
		"**and** server) over the window / answers; the client's share is about the same for probe and Wharf.\n")
	p("- Bounds: every run stops at its window's end or after %d requests per connection; the whole program has a deadline.\n\n", r.Cfg.maxPerWorker)

	p("## Verdicts\n\n| Target | Measured | Target | Verdict |\n|---|---|---|---|\n")
	for _, v := range r.verdicts() {
		p("| %s | %s | %s | %s |\n", v.Name, v.Figure, v.Target, passFail(v.OK))
	}
	p("\n")

	for _, wl := range workloads {
		p("## %s: %s\n\n", wl.Name, wl.What)
		p("Targets: throughput ≥ %.2f × probe; p99 ≤ limit = 2 × probe p99 + 1 ms; 0 non-200. "+
			"Each ratio is taken against the probe run of the same round; the verdict uses the median over the %d rounds, "+
			"or over the undisturbed ones when some were disturbed by other processes (see “other procs” below); "+
			"the absolute figures are medians over the same rounds.\n\n", wl.Min, r.Cfg.rounds)
		p("| conns | probe req/s | Wharf req/s | throughput ratio | probe p99 | Wharf p99 | Wharf p99 / limit | non-200 / errors | verdict |\n")
		p("|---|---|---|---|---|---|---|---|---|\n")
		for _, all := range r.Rows {
			row := all.clean(r.Cfg.maxOthers)
			tr, pr := median(row.throughputRatios(wl)), median(row.p99Ratios(wl))
			ok, non200, errs := all.answers(wl)
			pass := tr >= wl.Min && pr <= 1 && non200 == 0 && errs == 0 && ok > 0
			p("| %d | %s | %s | %.2f | %s | %s | %.2f | %d / %d | %s |\n", row.Conns,
				rps(row.medianOf(probeOf, runResult.RPS)), rps(row.medianOf(wl.Pick, runResult.RPS)), tr,
				ms(time.Duration(row.medianOf(probeOf, p99Of))), ms(time.Duration(row.medianOf(wl.Pick, p99Of))), pr,
				non200, errs, passFail(pass))
		}
		p("\n")
	}

	p("### Every run (W1, W2 and their probe)\n\n")
	p("| round | conns | attempts | run | new conns | requests | req/s | p50 | p90 | p99 | p99.9 | max | CPU/req | other procs |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for round := range r.Cfg.rounds {
		for _, row := range r.Rows {
			if round >= len(row.Rounds) {
				continue
			}
			pr := row.Rounds[round]
			for _, x := range []struct {
				name string
				res  runResult
			}{{"probe", pr.Probe}, {"W1", pr.W1}, {"W2", pr.W2}} {
				p("| %d | %d | %d | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", round+1, x.res.Conns, pr.Attempts, x.name, x.res.Accepted,
					x.res.OK+x.res.Non200, rps(x.res.RPS()), ms(x.res.Lat.P50), ms(x.res.Lat.P90), ms(x.res.Lat.P99),
					ms(x.res.Lat.P999), ms(x.res.Lat.Max), us(x.res.CPUPerRequest()), pct(x.res.Others))
			}
		}
	}
	p("\n“new conns” counts connections the server accepted inside the measured window: 0 means every connection "+
		"opened during the warm-up stayed alive throughout (keep-alive held). “other procs” is the share of the machine's CPU "+
		"that processes other than this benchmark used during that run (from /proc/stat): a run with a high share was disturbed from outside. "+
		"A triple (probe, W1, W2) in which any run exceeded %s was run again, up to %d more times, keeping the least disturbed (“attempts”).\n\n",
		pct(r.Cfg.maxOthers), r.Cfg.retries)

	if co := r.CrossOrigin; co != nil {
		p("### W2 cross-origin oracle\n\n")
		p("%d cookie-authenticated `POST /api/hub/sessions/{own handle}/revoke` requests, rotating four foreign variants "+
			"(foreign Origin + `cross-site`; foreign Origin + `same-origin`; own Origin + `cross-site`; same host, other port + `same-site`): "+
			"**%d answered 403** (other statuses: %s); the session was %s afterwards. ", co.Requests, co.Forbidden, statusCounts(co.Other),
			map[bool]string{true: "still active", false: "revoked"}[co.StillActive])
		p("A cross-origin cookie `GET /api/hub/state` answered %d: by the spec (rule 5 of Authentication, architecture.md CSRF) only "+
			"state-changing cookie requests and the live stream are origin-checked, so a GET is expected to pass.\n\n", co.GetStatus)
	}

	a := r.Attack
	p("## W10: login abuse during W1\n\n")
	p("%d `POST /login` with the right user name (`%s`) and a wrong password, from one client (127.0.0.1), one every %s "+
		"(open loop) over %s, while W1 runs at %d connections. The baseline is a W1 run of the same length and concurrency "+
		"just before, in the same process. Limiter: %d failures per address per %s, %d per name per %s (hub's defaults); "+
		"the attack's %s fits in one address window, so its budget is **%d** verifications.\n\n",
		a.Attempts, benchUser, (a.Over / time.Duration(a.Attempts)).Round(time.Millisecond), a.Over, r.Cfg.attackConns,
		benchLoginLimits.PerAddress, benchLoginLimits.AddressWindow, benchLoginLimits.PerName, benchLoginLimits.NameWindow, a.Over, r.Budget)
	p("| figure | value |\n|---|---|\n")
	p("| answers 401 / 429 / other | %d / %d / %s |\n", a.ByStatus[401], a.ByStatus[429], otherStatuses(a))
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

	if r.Unauth != nil || len(r.Auth) > 0 {
		p("## Diagnosis: where Wharf's per-request cost goes\n\n")
		p("CPU/req is the whole process's CPU time per answer (load generator included), median over rounds:\n\n")
		p("| conns | probe | W1 | W2 | W1 − probe |\n|---|---|---|---|---|\n")
		for _, row := range r.Rows {
			pc, w1c, w2c := row.medianOf(probeOf, cpuOf), row.medianOf(workloads[0].Pick, cpuOf), row.medianOf(workloads[1].Pick, cpuOf)
			p("| %d | %s | %s | %s | %s |\n", row.Conns, us(time.Duration(pc)), us(time.Duration(w1c)), us(time.Duration(w2c)), us(time.Duration(w1c-pc)))
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
		for _, d := range r.SQL {
			p("- The session lookup on the same database file, %s: %s per call (%d calls, %d errors).\n", d.Name, us(d.PerCall()), d.Ops, d.Errors)
		}
		p("\n")
	}

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
	p("Where Wharf's time goes: the only work an authenticated `GET /api/hub/state` does beyond the probe is the path check, " +
		"the dispatch, a JSON encode with three headers, and `hub.Authenticate`, which runs one SQLite read transaction " +
		"(BEGIN, an unprepared `SELECT … FROM sessions WHERE digest = ?`, COMMIT) through `database/sql` and " +
		"`modernc.org/sqlite` on every request.")
	if len(r.Auth) > 0 {
		p(" In this run `hub.Authenticate` cost %s per call on one goroutine", us(r.Auth[0].PerCall()))
		if r.Unauth != nil {
			p(", and Wharf answering 401 (everything but the lookup) used %s CPU/req", us(r.Unauth.CPUPerRequest()))
		}
		p(".")
	}
	if len(r.SQL) == 3 {
		p(" The same lookup costs %s as Wharf runs it, %s without the transaction and %s as a prepared statement without "+
			"a transaction. Preparing the statement while keeping the transaction, which the Store port's unit of work "+
			"requires, was tried and gained nothing measurable (`BenchmarkSessionLookup` in adapters/sqlite): the "+
			"transaction's BEGIN and COMMIT are the cost. The lever left is a short-lived in-memory cache of active "+
			"sessions, which must still see revocations made by `wharf user` in another process.",
			us(r.SQL[0].PerCall()), us(r.SQL[1].PerCall()), us(r.SQL[2].PerCall()))
	}
	p("\n\n")
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
	p("- Wharf's state answer currently lists no workspaces (`hub.State` returns none), so the body is %d B rather than "+
		"the 5- and 50-workspace forms of anchors.md §2.4; the probe serves the same bytes.\n", len(r.StateBody))
	p("- p99 at 1 connection is a fraction of a millisecond, so the +1 ms slack dominates that limit; at 50 connections "+
		"on %d CPUs, p99 is mostly queueing behind other connections and varies by tens of percent between runs.\n", m.NumCPU)
	p("- W10's hashes happen in the attack's first second (the budget is spent at once); after that every attempt is a " +
		"cheap 429, so the W1 p99 over the whole window mostly reflects the refused attempts. p99.9 and max show the hashes.\n")
	return b.String()
}
