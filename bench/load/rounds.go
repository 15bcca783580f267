package main

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// pairRow is one round at one concurrency: the probe, W1 and W2, run one
// after the other.
type pairRow struct {
	Probe, W1, W2 runResult
	Attempts      int // triples run to get this one (the least disturbed is kept)
}

// disturbance is the largest share of the machine other processes took
// during any of the three runs (0 when unknown).
func (p pairRow) disturbance() float64 {
	d := 0.0
	for _, r := range []runResult{p.Probe, p.W1, p.W2} {
		if !math.IsNaN(r.Others) {
			d = max(d, r.Others)
		}
	}
	return d
}

// concRow is every round at one concurrency.
type concRow struct {
	Conns  int
	Rounds []pairRow
}

// workload picks W1 or W2 out of a round.
type workload struct {
	Name, What string
	Min        float64 // throughput floor, × probe
	Pick       func(pairRow) runResult
}

var workloads = []workload{
	{"W1", "bearer `GET /api/hub/state` (`Authorization: Bearer <sessionId>`)", w1MinThroughput,
		func(x pairRow) runResult { return x.W1 }},
	{"W2", "cookie `GET /api/hub/state` (`Cookie: wharf_hub_<port>=…`, `Origin: http://127.0.0.1:<port>`, `Sec-Fetch-Site: same-origin`)", w2MinThroughput,
		func(x pairRow) runResult { return x.W2 }},
}

// perRound applies f to every round and returns the values.
func (c concRow) perRound(f func(pairRow) float64) []float64 {
	out := make([]float64, len(c.Rounds))
	for i, r := range c.Rounds {
		out[i] = f(r)
	}
	return out
}

// throughputRatios are the workload's req/s over its round's probe's.
func (c concRow) throughputRatios(wl workload) []float64 {
	return c.perRound(func(r pairRow) float64 { return ratio(wl.Pick(r).RPS(), r.Probe.RPS()) })
}

// p99Ratios are the workload's p99 over its round's limit (≤ 1 passes).
func (c concRow) p99Ratios(wl workload) []float64 {
	return c.perRound(func(r pairRow) float64 {
		return ratio(float64(wl.Pick(r).Lat.P99), float64(p99Limit(r.Probe.Lat.P99)))
	})
}

// medianOf returns the median over rounds of a run's figure.
func (c concRow) medianOf(pick func(pairRow) runResult, f func(runResult) float64) float64 {
	return median(c.perRound(func(r pairRow) float64 { return f(pick(r)) }))
}

func probeOf(x pairRow) runResult { return x.Probe }

func p99Of(r runResult) float64 { return float64(r.Lat.P99) }

func cpuOf(r runResult) float64 { return float64(r.CPUPerRequest()) }

// answers sums the workload's non-200 answers and errors over the rounds.
func (c concRow) answers(wl workload) (ok, non200, errs int) {
	for _, r := range c.Rounds {
		x := wl.Pick(r)
		ok, non200, errs = ok+x.OK, non200+x.Non200, errs+x.Errors
	}
	return
}

// clean returns the row with only the rounds no outside process disturbed
// (no run above maxOthers), or the whole row when every round was
// disturbed.
func (c concRow) clean(maxOthers float64) concRow {
	out := concRow{Conns: c.Conns}
	for _, r := range c.Rounds {
		if r.disturbance() <= maxOthers {
			out.Rounds = append(out.Rounds, r)
		}
	}
	if len(out.Rounds) == 0 {
		return c
	}
	return out
}

// roundList lists f over every round, marking disturbed rounds with *.
func (c concRow) roundList(f func(pairRow) float64, maxOthers float64) string {
	parts := make([]string, len(c.Rounds))
	for i, r := range c.Rounds {
		parts[i] = fmt.Sprintf("%.2f", f(r))
		if r.disturbance() > maxOthers {
			parts[i] += "*"
		}
	}
	return strings.Join(parts, ", ")
}

// basis says which rounds a verdict's median is over.
func (c concRow) basis(maxOthers float64) string {
	cl := c.clean(maxOthers)
	if len(cl.Rounds) == len(c.Rounds) {
		if cl.Rounds[0].disturbance() > maxOthers {
			return fmt.Sprintf("median of all %d rounds, all disturbed", len(c.Rounds))
		}
		return fmt.Sprintf("median of %d rounds", len(c.Rounds))
	}
	return fmt.Sprintf("median of the %d undisturbed round(s)", len(cl.Rounds))
}

// runRounds runs the probe and the Wharf targets at every concurrency of
// cfg.conns, cfg.rounds times over, each concurrency's runs back to back.
// w2 may be nil (its runs are then skipped and left zero). A round whose
// runs other processes disturbed beyond cfg.maxOthers is run again, up to
// cfg.retries times, and the least disturbed attempt is kept.
func runRounds(ctx context.Context, cfg config, label string, pt target, probeAcc *counter, w1, w2 *target, wAcc *counter,
	progress func(string, ...any)) ([]concRow, error) {
	rows := make([]concRow, len(cfg.conns))
	for i, n := range cfg.conns {
		rows[i].Conns = n
	}
	for round := 1; round <= cfg.rounds; round++ {
		for i, n := range cfg.conns {
			var best pairRow
			for attempt := 1; attempt <= 1+cfg.retries; attempt++ {
				progress("%s round %d/%d at %d conns (attempt %d)", label, round, cfg.rounds, n, attempt)
				pr := pairRow{Attempts: attempt}
				pr.Probe = closedLoop(ctx, pt, n, cfg.warmup, cfg.duration, cfg.maxPerWorker, probeAcc, nil)
				if w1 != nil {
					pr.W1 = closedLoop(ctx, *w1, n, cfg.warmup, cfg.duration, cfg.maxPerWorker, wAcc, nil)
				}
				if w2 != nil {
					pr.W2 = closedLoop(ctx, *w2, n, cfg.warmup, cfg.duration, cfg.maxPerWorker, wAcc, nil)
				}
				if err := ctx.Err(); err != nil {
					return rows, err
				}
				if attempt == 1 || pr.disturbance() < best.disturbance() {
					best = pr
				}
				best.Attempts = attempt
				if pr.disturbance() <= cfg.maxOthers {
					break
				}
				progress("  other processes took %.0f %% of the machine during one of these runs", 100*pr.disturbance())
			}
			rows[i].Rounds = append(rows[i].Rounds, best)
		}
	}
	return rows, nil
}
