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

// report is everything one run measured. A workload that was not selected
// leaves its fields zero or nil, and the report leaves its sections out.
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
	StateCall   *authDiag // hub.State in-process on the empty Hub
	SQL         []sqlDiag
	Baseline    runResult
	During      runResult
	Attack      *attackResult
	Budget      int
	W9          *w9Result
	W11         *w11Result
	State50     *state50Result
	WhatIf      *ttlDiag // the long-FactsTTL diagnosis; nil when not run
	Live        *liveReport
	D1          *d1Result
	WSFSType    string  // file system of the workspace folders
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

// selectedWorkloads are the W1-like workloads of the rounds that ran.
func (r *report) selectedWorkloads() []workload {
	var out []workload
	for _, wl := range workloads {
		if r.Cfg.has(strings.ToLower(wl.Name)) {
			out = append(out, wl)
		}
	}
	return out
}

func (r *report) verdicts() []verdict {
	var vs []verdict
	for _, wl := range r.selectedWorkloads() {
		vs = append(vs, rowVerdicts(wl.Name, r.Rows, wl, r.Cfg.maxOthers)...)
	}
	if co := r.CrossOrigin; co != nil {
		vs = append(vs, verdict{"W2 cross-origin state change",
			fmt.Sprintf("%d/%d answered 403; session %s", co.Forbidden, co.Requests, map[bool]string{true: "still active", false: "REVOKED"}[co.StillActive]),
			"100 % 403, session untouched", co.Forbidden == co.Requests && co.StillActive})
	}
	if r.Attack != nil {
		vs = append(vs, r.w10Verdicts()...)
	}
	if r.W9 != nil {
		vs = append(vs, r.W9.verdicts(r.Cfg.maxOthers)...)
	}
	if r.W11 != nil {
		vs = append(vs, r.W11.verdicts()...)
	}
	if s := r.State50; s != nil {
		vs = append(vs, rowVerdicts("state50 W1", s.Rows, workloads[0], r.Cfg.maxOthers)...)
		vs = append(vs, verdict{"state50 answer", fmt.Sprintf("%d workspaces, %d running; %s", stateWorkspaces, s.Running, s.endFigure()),
			fmt.Sprintf("%d running; unchanged during the runs", stateRunning), s.Running == stateRunning && s.SameAtEnd})
	}
	if r.Live != nil {
		vs = append(vs, r.Live.verdicts()...)
	}
	if r.D1 != nil {
		vs = append(vs, r.D1.verdicts()...)
	}
	return vs
}

// rowVerdicts judges a W1-like workload over its rows: throughput and p99
// against each round's probe (median over the undisturbed rounds) and the
// count of non-200 answers.
func rowVerdicts(name string, rows []concRow, wl workload, mo float64) []verdict {
	var vs []verdict
	for _, all := range rows {
		row := all.clean(mo)
		tr := median(row.throughputRatios(wl))
		pr := median(row.p99Ratios(wl))
		ok, non200, errs := all.answers(wl)
		trOf := func(x pairRow) float64 { return ratio(wl.Pick(x).RPS(), x.Probe.RPS()) }
		prOf := func(x pairRow) float64 {
			return ratio(float64(wl.Pick(x).Lat.P99), float64(p99Limit(x.Probe.Lat.P99)))
		}
		vs = append(vs,
			verdict{fmt.Sprintf("%s throughput, %d conns", name, all.Conns),
				fmt.Sprintf("%.2f × probe (%s; rounds: %s)", tr, all.basis(mo), all.roundList(trOf, mo)),
				fmt.Sprintf("≥ %.2f × probe", wl.Min), tr >= wl.Min},
			verdict{fmt.Sprintf("%s p99, %d conns", name, all.Conns),
				fmt.Sprintf("%.2f × limit (%s; rounds: %s)", pr, all.basis(mo), all.roundList(prOf, mo)),
				"≤ 1 × limit, limit = 2 × probe p99 + 1 ms", pr <= 1},
			verdict{fmt.Sprintf("%s answers, %d conns", name, row.Conns),
				fmt.Sprintf("%d non-200, %d errors", non200, errs), "0 non-200, 0 errors",
				non200 == 0 && errs == 0 && ok > 0})
	}
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

// mdWriter accumulates the Markdown report.
type mdWriter struct{ strings.Builder }

func (b *mdWriter) p(format string, a ...any) { fmt.Fprintf(b, format, a...) }

func (r *report) markdown() string {
	var b mdWriter
	p := b.p
	m := r.Machine
	p("# Wharf load benchmark results\n\n")
	p("Generated by `go run ./bench/load %s` (the command `just bench` runs) on %s; the run took %s. "+
		"Running it again overwrites this file; every figure below is from that one run on this machine.\n\n",
		strings.Join(r.Args, " "), r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Elapsed.Round(time.Second))

	p("## Machine\n\n| | |\n|---|---|\n")
	p("| CPU | %s |\n| Logical CPUs (/proc/cpuinfo, runtime.NumCPU) | %d, %d |\n| GOMAXPROCS | %d |\n", m.CPU, m.Logical, m.NumCPU, m.GOMAXPROCS)
	p("| Go | %s %s |\n| Kernel | %s |\n| Memory | %s |\n", m.Go, m.OSArch, m.Kernel, m.Memory)
	if r.WSFSType != "" {
		p("| File system of the temp dirs (databases, workspace folders) | %s |\n", r.WSFSType)
	}
	p("| Load average (1, 5, 15 min) at start / end | %s / %s |\n", r.LoadStart, r.LoadEnd)
	p("| CPU used by other processes during the run | %s of the machine |\n\n", pct(r.Others))

	p("## Method\n\n")
	p("- Workloads run: %s (`-workloads`).\n", strings.Join(r.ranWorkloads(), ", "))
	p("- One process holds the load generator, the **probe** (a minimal `net/http` handler: ServeMux route, " +
		"`Content-Type` header, a pre-serialized body) and **Wharf** (`hub.Hub` over `adapters/sqlite`, " +
		"`adapters/osfs`, `adapters/gitexec` and `adapters/local` in a fresh 0700 temp dir, `httpapi.NewHandler`, " +
		"`http.Server` configured as in `cmd/wharf/serve.go`, default argon2id cost), each on its own `127.0.0.1:0` listener. " +
		"W1, W2 and W10 use a Wharf with no workspace; W9, W11 and the 50-workspace state use a second one whose sessions " +
		"run `wharf session` from `./cmd/wharf`, built once at the start; the live workloads (W3–W7, W12) a third, described in their section.\n")
	if len(r.StateBody) > 0 {
		p("- The W1/W2 probe answers the exact bytes of Wharf's state answer, captured from Wharf once before the runs (%d B: `%s`).\n",
			len(r.StateBody), strings.TrimSpace(string(r.StateBody)))
	}
	p("- Closed loop: each connection is one goroutine with its own keep-alive `http.Transport` (one connection), "+
		"sending the next request as soon as the previous body is read. Each run: %s warm-up (discarded), then %s measured; "+
		"every request started in the window is recorded (latency = send to body read). Throughput = answers started in the window / window.\n",
		r.Cfg.warmup, r.Cfg.duration)
	p("- Servers are driven one at a time: at each concurrency the probe, then W1, then W2 (state50: the probe, then W1); "+
		"all concurrencies make a round, and %d rounds run back to back (W9: raw SQLite, the HTTP write probe, then Wharf, "+
		"%d rounds). The only overlap is W10's attack, which runs inside a W1 run against Wharf.\n", r.Cfg.rounds, r.Cfg.rounds)
	p("- Percentiles by nearest rank over every recorded latency. CPU/req = process CPU time (getrusage of the process **and** " +
		"its reaped children: load generator, server, and the git and session processes Wharf ran) over the window / answers; " +
		"the client's share is about the same for probe and Wharf.\n")
	p("- Bounds: every run stops at its window's end or after %d requests per connection; the whole program has a deadline.\n\n", r.Cfg.maxPerWorker)

	p("## Verdicts\n\n| Target | Measured | Target | Verdict |\n|---|---|---|---|\n")
	for _, v := range r.verdicts() {
		p("| %s | %s | %s | %s |\n", v.Name, v.Figure, v.Target, passFail(v.OK))
	}
	p("\n")

	wls := r.selectedWorkloads()
	for _, wl := range wls {
		p("## %s: %s\n\n", wl.Name, wl.What)
		b.concTable(r.Rows, wl, r.Cfg)
	}
	if len(wls) > 0 {
		p("### Every run (%s and their probe)\n\n", strings.Join(workloadNames(wls), ", "))
		b.everyRun(r.Rows, wls, r.Cfg)
	}
	if co := r.CrossOrigin; co != nil {
		b.crossOrigin(co)
	}
	if r.Attack != nil {
		r.w10Section(&b)
	}
	r.workspaceSections(&b)
	if r.Live != nil {
		r.Live.markdown(&b)
	}
	if r.D1 != nil {
		r.D1.markdown(&b)
	}
	r.diagnosis(&b)
	r.reading(&b)
	return b.String()
}

// ranWorkloads lists the selected workloads in running order.
func (r *report) ranWorkloads() []string {
	var out []string
	for _, name := range allWorkloads {
		if r.Cfg.has(name) {
			out = append(out, name)
		}
	}
	return out
}

func workloadNames(wls []workload) []string {
	out := make([]string, len(wls))
	for i, wl := range wls {
		out[i] = wl.Name
	}
	return out
}

// concTable writes the per-concurrency table of a W1-like workload.
func (b *mdWriter) concTable(rows []concRow, wl workload, cfg config) {
	p := b.p
	p("Targets: throughput ≥ %.2f × probe; p99 ≤ limit = 2 × probe p99 + 1 ms; 0 non-200. "+
		"Each ratio is taken against the probe run of the same round; the verdict uses the median over the %d rounds, "+
		"or over the undisturbed ones when some were disturbed by other processes (see “other procs” below); "+
		"the absolute figures are medians over the same rounds.\n\n", wl.Min, cfg.rounds)
	p("| conns | probe req/s | Wharf req/s | throughput ratio | probe p99 | Wharf p99 | Wharf p99 / limit | non-200 / errors | verdict |\n")
	p("|---|---|---|---|---|---|---|---|---|\n")
	for _, all := range rows {
		row := all.clean(cfg.maxOthers)
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

// runLine writes one row of an every-run table.
func (b *mdWriter) runLine(prefix, name string, x runResult) {
	b.p("| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", prefix, name, x.Accepted,
		x.OK+x.Non200, rps(x.RPS()), ms(x.Lat.P50), ms(x.Lat.P90), ms(x.Lat.P99),
		ms(x.Lat.P999), ms(x.Lat.Max), us(x.CPUPerRequest()), pct(x.Others))
}

// everyRun writes every run of the rounds, the probe's and the workloads'.
func (b *mdWriter) everyRun(rows []concRow, wls []workload, cfg config) {
	p := b.p
	p("| round | conns | attempts | run | new conns | requests | req/s | p50 | p90 | p99 | p99.9 | max | CPU/req | other procs |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for round := range cfg.rounds {
		for _, row := range rows {
			if round >= len(row.Rounds) {
				continue
			}
			pr := row.Rounds[round]
			prefix := fmt.Sprintf("%d | %d | %d", round+1, row.Conns, pr.Attempts)
			b.runLine(prefix, "probe", pr.Probe)
			for _, wl := range wls {
				b.runLine(prefix, wl.Name, wl.Pick(pr))
			}
		}
	}
	p("\n“new conns” counts connections the server accepted inside the measured window: 0 means every connection "+
		"opened during the warm-up stayed alive throughout (keep-alive held). “other procs” is the share of the machine's CPU "+
		"that processes other than this benchmark (and its children) used during that run (from /proc/stat): a run with a high share "+
		"was disturbed from outside. A round in which any run exceeded %s was run again, up to %d more times, keeping the least "+
		"disturbed (“attempts”).\n\n", pct(cfg.maxOthers), cfg.retries)
}
