// Command load is Wharf's load benchmark: the workloads of bench/README.md,
// each judged against a baseline measured in the same run, written as one
// Markdown report. The Wharf under test is built by adapters/daemon, as
// cmd/wharf builds it.
//
// Usage (from the module root, as `just bench` runs it):
//
//	go run ./bench/load -out bench/RESULTS.md
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	conns                                         []int
	rounds, retries, maxPerWorker                 int
	attackConns, attackN, crossOriginN, w11Cycles int
	maxOthers                                     float64
	warmup, duration, attackOver                  time.Duration
	liveWindow, w12Idle                           time.Duration
	out, cpuProfile, wrk                          string
	strict                                        bool
	workloads                                     map[string]bool
}

func (c config) has(name string) bool { return c.workloads[name] }

// errMissed is returned under -strict when a target is missed.
var errMissed = errors.New("a target was missed (see the report)")

func main() {
	// An interrupt cancels the run, so every clean-up (children, temp
	// dirs) still happens.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if stop(); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1 + b2i(errors.Is(err, errMissed)))
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conns := fs.String("conns", "1,32,128", "comma-separated `list` of connection counts of W1, W2, state1 and state50")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of the runs judged by ratio, and of W9; verdicts use the median")
	fs.IntVar(&c.retries, "retries", 2, "times a round is run again when other processes disturbed it")
	fs.Float64Var(&c.maxOthers, "max-others", 0.10, "share of the machine's CPU other processes may take during a run before its round is retried")
	fs.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "discarded warm-up before each measured run")
	fs.DurationVar(&c.duration, "duration", 2500*time.Millisecond, "measured window of each run")
	fs.IntVar(&c.maxPerWorker, "max-requests", 2_000_000, "upper bound on requests per connection per run")
	fs.IntVar(&c.attackConns, "attack-conns", 10, "W1 connections during the W10 attack and its baseline")
	fs.IntVar(&c.attackN, "attack-attempts", 100, "W10 wrong-password logins")
	fs.DurationVar(&c.attackOver, "attack-over", 10*time.Second, "W10 time over which the attempts are spread")
	fs.IntVar(&c.crossOriginN, "cross-origin", 100, "W2 cross-origin oracle requests")
	fs.IntVar(&c.w11Cycles, "w11-cycles", 50, "W11 measured start/stop cycles (after one warm-up cycle)")
	fs.DurationVar(&c.liveWindow, "live-window", 20*time.Second, "W3, W4 and W7: how long the activity changes go on")
	fs.DurationVar(&c.w12Idle, "w12-idle", 30*time.Second, "W12: each idle window (without streams, then with them, 1 s longer)")
	fs.StringVar(&c.wrk, "wrk", "wrk", "wrk `command`: drives W1 and state1 when found on PATH; empty: never")
	fs.StringVar(&c.out, "out", "", "write the Markdown report to this `file` (overwritten); default stdout")
	fs.BoolVar(&c.strict, "strict", false, "exit with status 2 when a target is missed")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (servers and in-process load generator) to `file`")
	var names []string
	for _, w := range workloads {
		names = append(names, w.name)
	}
	wls := fs.String("workloads", strings.Join(names, ","), "comma-separated `list` of workloads to run (they run in this order)")
	if err := fs.Parse(args); err != nil {
		return c, err
	} else if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for f := range strings.SplitSeq(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1000 {
			return c, fmt.Errorf("-conns: %q is not a connection count in 1..1000", f)
		}
		c.conns = append(c.conns, n)
	}
	c.workloads = map[string]bool{}
	for f := range strings.SplitSeq(*wls, ",") {
		if name := strings.ToLower(strings.TrimSpace(f)); slices.Contains(names, name) {
			c.workloads[name] = true
		} else {
			return c, fmt.Errorf("-workloads: unknown workload %q (known: %s)", f, strings.Join(names, ", "))
		}
	}
	switch {
	case c.rounds < 1 || c.rounds > 20 || c.retries < 0 || c.retries > 10 || c.maxPerWorker < 1 || c.w11Cycles < 1 || c.attackN < 1:
		return c, errors.New("-rounds must be in 1..20, -retries in 0..10; -max-requests, -w11-cycles and -attack-attempts positive")
	case c.duration < 100*time.Millisecond || c.warmup < 0 || c.attackOver < 100*time.Millisecond || c.attackConns < 1:
		return c, errors.New("-duration and -attack-over must be at least 100ms, -warmup not negative, -attack-conns positive")
	case c.liveWindow < time.Second || c.w12Idle < 5*time.Second || c.maxOthers < 0 || c.maxOthers > 1:
		return c, errors.New("-live-window must be at least 1s, -w12-idle at least 5s, -max-others in 0..1")
	}
	return c, nil
}

func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	budget := 5 * time.Minute // the whole run's deadline: each selected workload's bound, and a margin
	for _, w := range workloads {
		if cfg.has(w.name) {
			budget += w.limit(cfg)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	rep, err := runAll(ctx, cfg, args, func(format string, a ...any) { fmt.Fprintf(stderr, "load: "+format+"\n", a...) })
	if err != nil {
		return err
	}
	if md := rep.markdown(); cfg.out == "" {
		io.WriteString(stdout, md)
	} else if err := os.WriteFile(cfg.out, []byte(md), 0o644); err != nil {
		return err
	}
	for _, v := range rep.verdicts() {
		fmt.Fprintf(stderr, "load: %-4s %s: %s (target %s)\n", strings.Trim(passFail(v.OK), "*"), v.Name, v.Figure, v.Target)
		if !v.OK && cfg.strict {
			err = errMissed
		}
	}
	return err
}
