package main

import (
	"fmt"
	"strings"
	"time"
)

// This file judges and writes the workloads run against the Wharf with
// registered workspaces: W9, W11 and the 50-workspace state.

// clean returns the rounds no outside process disturbed beyond maxOthers,
// or every round when all were.
func (r *w9Result) clean(maxOthers float64) []w9Round {
	var out []w9Round
	for _, x := range r.Rounds {
		if x.disturbance() <= maxOthers {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return r.Rounds
	}
	return out
}

// medianOver returns the median of f over rounds.
func medianOver(rounds []w9Round, f func(w9Round) float64) float64 {
	xs := make([]float64, len(rounds))
	for i, x := range rounds {
		xs[i] = f(x)
	}
	return median(xs)
}

// basis says which rounds a W9 median is over.
func (r *w9Result) basis(maxOthers float64) string {
	if n := len(r.clean(maxOthers)); n < len(r.Rounds) {
		return fmt.Sprintf("median of the %d undisturbed round(s)", n)
	}
	return fmt.Sprintf("median of %d rounds", len(r.Rounds))
}

// list renders f over every round, disturbed ones marked with *.
func (r *w9Result) list(f func(w9Round) string, maxOthers float64) string {
	parts := make([]string, len(r.Rounds))
	for i, x := range r.Rounds {
		parts[i] = f(x)
		if x.disturbance() > maxOthers {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, ", ")
}

func wharfP99(x w9Round) float64 { return float64(x.Wharf.Lat.P99) }
func wharfRPS(x w9Round) float64 { return x.Wharf.RPS() }

func (r *w9Result) verdicts(mo float64) []verdict {
	cl := r.clean(mo)
	p99 := time.Duration(medianOver(cl, wharfP99))
	tput := medianOver(cl, wharfRPS)
	rawP99 := time.Duration(medianOver(cl, func(x w9Round) float64 { return float64(x.Raw.Lat.P99) }))
	probeP99 := time.Duration(medianOver(cl, func(x w9Round) float64 { return float64(x.Probe.Lat.P99) }))
	rawRPS := medianOver(cl, func(x w9Round) float64 { return x.Raw.RPS() })
	probeRPS := medianOver(cl, func(x w9Round) float64 { return x.Probe.RPS() })
	var non200, errs, ok int
	for _, x := range r.Rounds {
		non200, errs, ok = non200+x.Wharf.Non200, errs+x.Wharf.Errors, ok+x.Wharf.OK
	}
	names := "each client's workspace holds the last name it sent"
	if !r.NamesKept {
		names = "NAMES DIFFER: " + r.NamesNote
	}
	return []verdict{
		{"W9 display-name p99, 4 clients", fmt.Sprintf("%s (%s; rounds: %s); raw SQLite write p99 %s, HTTP write probe p99 %s (Wharf = %.1f × probe)",
			ms(p99), r.basis(mo), r.list(func(x w9Round) string { return ms(x.Wharf.Lat.P99) }, mo), ms(rawP99), ms(probeP99),
			ratio(float64(p99), float64(probeP99))),
			fmt.Sprintf("≤ %s (absolute)", ms(w9MaxP99)), p99 <= w9MaxP99},
		{"W9 mutations/s, 4 clients", fmt.Sprintf("%.0f/s (%s; rounds: %s) = %.2f × raw SQLite writes (%.0f/s), %.2f × HTTP write probe (%.0f/s)",
			tput, r.basis(mo), r.list(func(x w9Round) string { return rps(x.Wharf.RPS()) }, mo), ratio(tput, rawRPS), rawRPS,
			ratio(tput, probeRPS), probeRPS),
			fmt.Sprintf("≥ %.0f/s (absolute)", w9MinPerSec), tput >= w9MinPerSec},
		{"W9 answers", fmt.Sprintf("%d non-200, %d errors; %s", non200, errs, names), "0 non-200, 0 errors, every write landed",
			non200 == 0 && errs == 0 && ok > 0 && r.NamesKept},
	}
}

// endFigure says whether the 50-workspace answer stayed the same.
func (s *state50Result) endFigure() string {
	if s.SameAtEnd {
		return fmt.Sprintf("the %d B answer was byte-identical after the runs", len(s.Body))
	}
	return s.EndNote
}

// workspaceSections writes the W11, W9 and state50 sections, as run.
func (r *report) workspaceSections(b *mdWriter) {
	p := b.p
	if w := r.W11; w != nil {
		p("## W11: start/stop cycles of a real workspace session\n\n")
		p("One workspace (a temp dir the Hub `git init`ed) on the second Wharf; its local backend runs `wharf session` from "+
			"the binary built at the start. One warm-up cycle, then %d cycles of `POST /api/hub/sessions/{id}/start` (answered once "+
			"the child printed its readiness line and answered a facts call) and `POST …/stop` (answered once the child was "+
			"reaped), over one bearer keep-alive connection. Before each cycle, the same binary is spawned with `version` and "+
			"reaped (fork, exec, Go runtime start, exit, wait): the floor a start cannot go below. Afterwards: this process's "+
			"children and zombies from `/proc/*/stat`, and its open descriptors (`/proc/self/fd`) against the count after the "+
			"warm-up.\n\n", w.Cycles)
		p("| figure | p50 | p90 | p99 | max |\n|---|---|---|---|---|\n")
		for _, x := range []struct {
			name string
			s    summary
		}{{"start (HTTP)", w.Start}, {"stop (HTTP)", w.Stop}, {"baseline: spawn and reap `wharf version`", w.Spawn}} {
			p("| %s | %s | %s | %s | %s |\n", x.name, ms(x.s.P50), ms(x.s.P90), ms(x.s.P99), ms(x.s.Max))
		}
		p("\nStart p50 = %.1f × the spawn baseline's p50 (%s over it). Open descriptors: %d before the warm-up, %d after it "+
			"(the baseline), %d after the cycles%s. Children left: %d, "+
			"zombies: %d. The phase took %s.%s\n\n",
			ratio(float64(w.Start.P50), float64(w.Spawn.P50)), ms(w.Start.P50-w.Spawn.P50), w.FDBefore, w.FDBaseline, w.FDSettled,
			settleNote(*w), len(w.Children), w.Zombies, w.Elapsed.Round(time.Millisecond), errNote(w.Err))
	}
	if w := r.W9; w != nil {
		p("## W9: `POST /api/hub/workspaces/{id}/display-name` from %d clients\n\n", w9Clients)
		p("Each of %d closed-loop bearer clients renames its own workspace, alternating two names, so every request changes the "+
			"stored name and the Hub commits a write (a name equal to the stored one is not written). Targets are absolute "+
			"(issue 3): p99 ≤ %s and ≥ %.0f mutations/s. Two baselines run in the same rounds, on a fresh database file with "+
			"adapters/sqlite's settings (WAL, `synchronous=FULL`, `busy_timeout`, `BEGIN IMMEDIATE`, one writer connection) in "+
			"a temp dir on the same file system (%s): **raw SQLite**, the UPDATE Wharf commits, in its own transaction, "+
			"called in-process from %d goroutines; and the **HTTP write probe**, a minimal handler on the same route that "+
			"decodes the body, commits that write and answers a small JSON object (no authentication, no Hub). Each round runs "+
			"raw, probe, Wharf; %s warm-up and %s measured each.\n\n",
			w9Clients, ms(w9MaxP99), w9MinPerSec, w.FSType, w9Clients, r.Cfg.warmup, r.Cfg.duration)
		p("| round | run | writes | writes/s | p50 | p90 | p99 | p99.9 | max | CPU/write | other procs |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for i, x := range w.Rounds {
			for _, y := range []struct {
				name string
				res  runResult
			}{{"raw SQLite", x.Raw}, {"HTTP write probe", x.Probe}, {"Wharf", x.Wharf}} {
				p("| %d | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", i+1, y.name, y.res.OK+y.res.Non200, rps(y.res.RPS()),
					ms(y.res.Lat.P50), ms(y.res.Lat.P90), ms(y.res.Lat.P99), ms(y.res.Lat.P999), ms(y.res.Lat.Max),
					us(y.res.CPUPerRequest()), pct(y.res.Others))
			}
		}
		p("\n")
		if d := w.Diag; d != nil {
			p("Diagnosis (not judged). **Paced at %.0f mutations/s** in all for %s (open loop, %d clients, each request sent at its "+
				"scheduled time; latency from that time, so a stall counts against every request it delayed): raw SQLite "+
				"%s/s, p50 %s, p99 %s, max %s; Wharf over HTTP %s/s, p50 %s, p99 %s, max %s, %d non-200, %d errors. "+
				"`hub.SetDisplayName` called in-process from %d goroutines, closed loop (no HTTP, no authentication): "+
				"%s/s, p50 %s, p99 %s, max %s.\n\n",
				w9MinPerSec, pacedWindow(r.Cfg), w9Clients, rps(d.RawPaced.RPS()), ms(d.RawPaced.Lat.P50), ms(d.RawPaced.Lat.P99), ms(d.RawPaced.Lat.Max),
				rps(d.Paced.RPS()), ms(d.Paced.Lat.P50), ms(d.Paced.Lat.P99), ms(d.Paced.Lat.Max), d.Paced.Non200, d.Paced.Errors,
				w9Clients, rps(d.InProcess.RPS()), ms(d.InProcess.Lat.P50), ms(d.InProcess.Lat.P99), ms(d.InProcess.Lat.Max))
		}
		if d := r.WhatIf; d != nil && d.W9Paced != nil {
			x := d.W9Paced
			p("What-if (not judged): the same paced run against a Wharf whose `FactsTTL` is %s, so the workspace view each "+
				"answer carries is built from facts that are never refreshed during the run: %s/s, p50 %s, p99 %s, max %s, "+
				"%d non-200, %d errors.\n\n", whatIfTTLText, rps(x.RPS()), ms(x.Lat.P50), ms(x.Lat.P99), ms(x.Lat.Max), x.Non200, x.Errors)
		}
	}
	if s := r.State50; s != nil {
		p("## state50: W1 with %d workspaces, %d running\n\n", stateWorkspaces, stateRunning)
		p("W1 (bearer `GET /api/hub/state`) against the second Wharf with %d registered workspaces (real folders, each a Git "+
			"repository), %d of them running real `wharf session` children. The probe answers a copy of Wharf's real answer, "+
			"captured once after the starts (%d B, %d workspaces running); %s.\n\n",
			stateWorkspaces, stateRunning, len(s.Body), s.Running, s.endFigure())
		b.concTable(s.Rows, workloads[0], r.Cfg)
		p("### Every run (state50)\n\n")
		b.everyRun(s.Rows, workloads[:1], r.Cfg)
		if len(s.Diag) > 0 {
			p("### Diagnosis: the parts of `hub.State` with 50 workspaces\n\n")
			p("Called in-process from one goroutine on the same Wharf, its sessions still running:\n\n")
			for _, d := range s.Diag {
				p("- %s: %s per call (%d calls, %d errors).\n", d.Name, us(d.PerCall()), d.Ops, d.Errors)
			}
			p("\nEach timing above started once no git child was running and is the best of five short runs.\n\n")
		}
		if d := r.WhatIf; d != nil && len(d.Rows) > 0 {
			p("### What-if: the same with `FactsTTL` = %s (not judged)\n\n", whatIfTTLText)
			p("One round against a Wharf identical but for `FactsTTL`, so cached facts never expire during the runs: what " +
				"the state answer costs when no folder's facts are refreshed during the runs (by default each folder's are " +
				"refreshed every 2 s, by two `git` processes).\n\n")
			b.concTable(d.Rows, workloads[0], config{rounds: 1, maxOthers: r.Cfg.maxOthers})
			b.everyRun(d.Rows, workloads[:1], config{rounds: 1, maxOthers: r.Cfg.maxOthers})
		}
	}
}

// workspaceReading adds what the workspace workloads' figures say.
func (r *report) workspaceReading(b *mdWriter) {
	p := b.p
	if w := r.W11; w != nil && w.Cycles > 0 {
		p("W11: a start costs %s at the median, of which %s is what spawning and reaping the same binary costs anyway; "+
			"the rest is the child's socket and readiness line, the backend's facts call, and the Hub's write of the "+
			"workspace's auto-start mark (a `synchronous=FULL` commit).\n\n", ms(w.Start.P50), ms(w.Spawn.P50))
	}
	if w := r.W9; w != nil && len(w.Rounds) > 0 {
		cl := w.clean(r.Cfg.maxOthers)
		med := func(f func(w9Round) float64) float64 { return medianOver(cl, f) }
		p("W9: every mutation is one `synchronous=FULL` commit through adapters/sqlite's single writer connection, so the "+
			"raw SQLite figure (%.0f writes/s, p99 %s from %d goroutines) is the ceiling this file system and this driver allow; "+
			"the HTTP write probe (%.0f/s, p99 %s) adds the HTTP exchange. A Wharf request adds to that the session lookup "+
			"(a read transaction), the workspace lookup (another), the write transaction (a SELECT and the UPDATE under the "+
			"write lock) and the workspace view the answer carries (built from the folder's cached facts, which the Hub "+
			"refreshes by running `git` when they are older than `FactsTTL`). With %d closed-loop clients on %d CPUs, requests "+
			"also queue for the single writer connection and for the CPUs.",
			med(func(x w9Round) float64 { return x.Raw.RPS() }), ms(time.Duration(med(func(x w9Round) float64 { return float64(x.Raw.Lat.P99) }))),
			w9Clients, med(func(x w9Round) float64 { return x.Probe.RPS() }),
			ms(time.Duration(med(func(x w9Round) float64 { return float64(x.Probe.Lat.P99) }))), w9Clients, r.Machine.NumCPU)
		if d := w.Diag; d != nil {
			p(" At the issue's rate (paced %.0f/s) Wharf's p99 is %s against the bare commit's %s", w9MinPerSec,
				ms(d.Paced.Lat.P99), ms(d.RawPaced.Lat.P99))
			if d.RawPaced.Lat.P99 > w9MaxP99 {
				p(": on this machine even a bare `synchronous=FULL` commit misses %s at that rate, so the absolute target "+
					"is beyond what this file system's fsync allows here, whatever Wharf does", ms(w9MaxP99))
			}
			if wi := r.WhatIf; wi != nil && wi.W9Paced != nil {
				p("; with facts that never expire (`FactsTTL` = %s) Wharf's paced p99 is %s", whatIfTTLText, ms(wi.W9Paced.Lat.P99))
				if float64(wi.W9Paced.Lat.P99) < 0.8*float64(d.Paced.Lat.P99) {
					p(", so refreshing the folders' facts (requests waiting for it, or its `git` processes competing for the CPUs) makes part of the tail")
				} else {
					p(": no clear effect of the facts refresh on the p99 in this run")
				}
			}
			p(".")
		}
		p("\n\n")
	}
	if s := r.State50; s != nil && len(s.Rows) > 0 {
		one := s.Rows[0].clean(r.Cfg.maxOthers)
		p("state50: at %d connection(s) Wharf used %s of CPU per answer (load generator included) against the probe's %s. ",
			one.Conns, us(time.Duration(one.medianOf(workloads[0].Pick, cpuOf))), us(time.Duration(one.medianOf(probeOf, cpuOf))))
		if len(s.Diag) == 4 {
			st, reg, lst, git := s.Diag[0].PerCall(), s.Diag[1].PerCall(), s.Diag[2].PerCall(), s.Diag[3].PerCall()
			p("In-process, `hub.State` costs %s per call: it answers from the Hub's registry snapshot and its cached "+
				"listing, so the registry read (%s when timed alone) is paid once per registry change, not per request. ", us(st), us(reg))
			p("Learning the facts costs more: an `lstat` of every folder %s, one `GitRunner.Inspect` %s (the runner "+
				"reuses an inspection while the folder's Git files are unchanged, for at most 10 s), which the Hub asks "+
				"for each folder every `FactsTTL` (2 s by default), in the background. ", us(lst), ms(git))
		}
		if wi := r.WhatIf; wi != nil && len(wi.Rows) > 0 {
			last := len(wi.Rows) - 1
			x, y := wi.Rows[last], s.Rows[last].clean(r.Cfg.maxOthers)
			xp, yp := x.medianOf(workloads[0].Pick, p99Of), y.medianOf(workloads[0].Pick, p99Of)
			xt, yt := median(x.throughputRatios(workloads[0])), median(y.throughputRatios(workloads[0]))
			p("With facts that are never refreshed (`FactsTTL` = %s), at %d connections p99 is %s (judged run: %s) and "+
				"throughput %.2f × probe (judged run: %.2f): ", whatIfTTLText, x.Conns, ms(time.Duration(xp)), ms(time.Duration(yp)), xt, yt)
			switch {
			case xt < workloads[0].Min && xp < 0.8*yp:
				p("refreshing the facts makes part of the tail, but the per-request work is what keeps the throughput below the target.")
			case xt < workloads[0].Min:
				p("the per-request work, not the facts refresh, is what keeps the throughput below the target.")
			case yt < workloads[0].Min:
				p("refreshing the facts accounts for the miss.")
			default:
				p("the judged run meets the target; refreshing the facts costs the difference.")
			}
		}
		p("\n\n")
	}
}
