// Command hosts measures workspaces on another machine against the same
// on the Hub's own, in one run, and prints the figures as a Markdown
// section of verdicts:
//
//	go run ./bench/hosts
//
// It builds `wharf` from this checkout, runs OpenSSH's sshd on a loopback
// port (its own host key, a client key, sessions' HOME a folder of the
// run's, as a remote machine's), runs `wharf serve --ssh-config` on
// loopback (adapters/daemon/daemontest), adds the sshd as a host and
// registers workspaces on both machines (the "remote" one is this
// machine, so the figures are what Wharf adds, not a network's):
//
//   - Start: POST start until it answers (the session ready), then stop,
//     alternating a local and a remote workspace, after one start of each
//     (the remote one copies the binary there). The baseline of one ssh
//     round trip is `ssh alias true` over a ControlMaster of the run's
//     own, which pays what every remote command pays (the remote login
//     shell). Target: the remote median at most twice the local one plus
//     one round trip.
//   - 20 remote sessions at once: 20 workspaces on the host started
//     together; the wall time until all answer, how many run, and the
//     Hub's resident memory before and after.
//   - A saved file → its document patch on the live stream: a file
//     written in the workspace's folder until the Hub sends the patch
//     naming it, through the forward for the remote one. Target: the
//     remote median at most 1.5× the local one.
//
// Everything runs on loopback, bounded in count and time; the daemon,
// sshd and the directory are removed at the end. Run it from the module
// root; it is a program, not a test.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

type config struct {
	rounds, sessions, saves int
	limit                   time.Duration
}

func main() {
	var cfg config
	flag.IntVar(&cfg.rounds, "rounds", 10, "starts of each workspace, alternating")
	flag.IntVar(&cfg.sessions, "sessions", 20, "remote sessions started at once")
	flag.IntVar(&cfg.saves, "saves", 10, "saved files per workspace")
	flag.DurationVar(&cfg.limit, "limit", 8*time.Minute, "the whole run's deadline")
	flag.Parse()
	if cfg.rounds < 1 || cfg.rounds > 100 || cfg.sessions < 1 || cfg.sessions > 64 || cfg.saves < 1 || cfg.saves > 100 {
		fmt.Fprintln(os.Stderr, "hosts: -rounds 1 to 100, -sessions 1 to 64, -saves 1 to 100")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.limit)
	defer cancel()
	began := time.Now()
	rows, err := run(ctx, cfg)
	report(cfg, rows, time.Since(began))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hosts:", err)
		os.Exit(1)
	}
}

// verdict is one row of the report.
type verdict struct {
	name, measured, target string
	pass                   bool
}

func progress(format string, a ...any) { fmt.Fprintf(os.Stderr, "hosts: "+format+"\n", a...) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// report prints the section.
func report(cfg config, rows []verdict, took time.Duration) {
	var b strings.Builder
	fmt.Fprintf(&b, "## More machines\n\n`go run ./bench/hosts` (%d starts each, %d sessions at once, %d saves each; %s, %d CPUs, took %s).\n\n",
		cfg.rounds, cfg.sessions, cfg.saves, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), took.Round(time.Second))
	b.WriteString("| Measure | Measured | Target | Verdict |\n|---|---|---|---|\n")
	for _, r := range rows {
		v := "PASS"
		if !r.pass {
			v = "FAIL"
		}
		if r.target == "" {
			v, r.target = "—", "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.name, r.measured, r.target, v)
	}
	fmt.Print(b.String())
}
