// Command perf measures conversations with coding agents through a real
// Hub, and prints the figures as a Markdown section of verdicts:
//
//	go run ./bench/chat
//
// It builds `wharf` and the scripted ACP agent (fakes/acpagent) from this
// checkout, runs `wharf serve` on loopback (adapters/daemon/daemontest)
// with the agent configured as `--agent perf=…`, and measures:
//
//   - Latency: 20 conversations in 5 registered, started workspaces, each
//     followed by one live stream on its `conversation` topic; each
//     conversation's agent plays the pace script (agentscript.Pace), so
//     the agents write 1,000 chunks a second in all for 10 s, each chunk
//     carrying the time of its write. The latency of a chunk is from that
//     write to this program's read of its envelope. The baseline, in the
//     same run: the same envelopes at the same rate through a minimal SSE
//     fan-out (probe, in this program) to 20 streams read by the same
//     client; the report gives the ratio.
//   - Child RSS per idle conversation: the VmRSS of one workspace's
//     `wharf session` child with 50 idle conversations less with none,
//     over 50 (no target given).
//   - Sharing: 100 live streams follow one conversation; the child's open
//     sockets (each feed the Hub opens is one connection, the Hub's
//     client keeps none idle) rise by one, and every stream reads every
//     chunk of a 200-chunk turn, in order.
//   - Streamed text: one answer of 16 MiB in 4 KiB chunks against 16 of
//     1 MiB, the time from the send to `completed` (target ≤ 2 ×).
//   - Tool flood: the child's RSS after 200 tool calls of 1 MiB output.
//
// -output-only runs the last two alone.
//
// Everything runs on loopback, bounded in count and time, and every
// process and directory is removed at the end (also after an interrupt).
// Run it from the module root; it is a program, not a test.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/bench/internal/proc"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

type config struct {
	workspaces, perWorkspace, rate, idle, subscribers, fanChunks int
	window                                                       time.Duration
	outputOnly                                                   bool
}

func main() {
	var cfg config
	flag.IntVar(&cfg.workspaces, "workspaces", 5, "workspaces of the latency run")
	flag.IntVar(&cfg.perWorkspace, "conversations", 4, "conversations per workspace in the latency run")
	flag.IntVar(&cfg.rate, "rate", 1000, "chunks a second, all conversations together")
	flag.DurationVar(&cfg.window, "window", 10*time.Second, "how long the agents stream")
	flag.IntVar(&cfg.idle, "idle", 50, "idle conversations of the memory figure")
	flag.IntVar(&cfg.subscribers, "subscribers", 100, "live streams following one conversation")
	flag.IntVar(&cfg.fanChunks, "fan-chunks", 200, "chunks of the shared conversation's turn (100 a second)")
	flag.BoolVar(&cfg.outputOnly, "output-only", false, "measure only what agents' output costs the child (streamed text, tool flood)")
	flag.Parse()
	n := cfg.workspaces * cfg.perWorkspace
	if cfg.workspaces < 1 || cfg.perWorkspace < 1 || n > streamsPerUser || cfg.rate < n || cfg.rate > 20000 ||
		cfg.window < time.Second || cfg.window > 2*time.Minute || cfg.idle < 1 || cfg.idle > 60 ||
		cfg.subscribers < 1 || cfg.subscribers > 150 || cfg.fanChunks < 1 || cfg.fanChunks > 10000 {
		fmt.Fprintf(os.Stderr, "chatperf: -workspaces × -conversations must be 1 to %d, -rate at least one per conversation and at most "+
			"20000, -window 1s to 2m, -idle 1 to 60, -subscribers 1 to 150, -fan-chunks 1 to 10000\n", streamsPerUser)
		os.Exit(2)
	}
	// An interrupt cancels the run; every clean-up still happens.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, 8*time.Minute+cfg.window)
	err := run(ctx, cfg)
	ended := ctx.Err()
	cancel()
	if stop(); err != nil && errors.Is(ended, context.Canceled) {
		err = errors.New("interrupted; everything it started is stopped and removed")
	} else if err != nil && errors.Is(ended, context.DeadlineExceeded) {
		err = fmt.Errorf("the run outlasted its bound of %s", 8*time.Minute+cfg.window)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatperf:", err)
		os.Exit(1)
	}
}

func progress(format string, a ...any) { fmt.Fprintf(os.Stderr, "chatperf: "+format+"\n", a...) }

// verdict is one row of the report; ok is nil for a figure without a
// target.
type verdict struct {
	measure, figure, target string
	ok                      *bool
}

func run(ctx context.Context, cfg config) error {
	began := time.Now()
	tmp, err := os.MkdirTemp("", "wharf-chatperf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	progress("building wharf and the scripted agent")
	wharfBin, agentBin, err := build(ctx, tmp)
	if err != nil {
		return err
	}
	w, err := startWharf(ctx, tmp, wharfBin, agentBin)
	if err != nil {
		return err
	}
	defer w.stop()

	var rows []verdict
	if !cfg.outputOnly {
		lat, err := latencyRuns(ctx, w, cfg)
		if err != nil {
			return err
		}
		rows = append(rows, lat...)
		idle, conv, err := idleMemory(ctx, w, cfg)
		if err != nil {
			return err
		}
		rows = append(rows, idle)
		fan, err := sharing(ctx, w, cfg, conv)
		if err != nil {
			return err
		}
		rows = append(rows, fan...)
	}
	text, err := streamedText(ctx, w)
	if err != nil {
		return err
	}
	flood, err := toolFlood(ctx, w)
	if err != nil {
		return err
	}
	rows = append(rows, text, flood)
	report(cfg, rows, time.Since(began))
	return nil
}

// result is what a latency run's streams read.
type result struct {
	lat                         []time.Duration // sorted
	expected, disorder, shortOf int
	others                      float64 // the other processes' share of the machine
	p50, p99, max               time.Duration
}

func collect(ss []*stream, count int, others float64) result {
	r := result{expected: len(ss) * count, others: others}
	for _, s := range ss {
		lat, disorder := s.taken()
		r.lat, r.disorder = append(r.lat, lat...), r.disorder+disorder
		if len(lat) < count {
			r.shortOf++
		}
	}
	slices.Sort(r.lat)
	r.p50, r.p99, r.max = percentile(r.lat, 50), percentile(r.lat, 99), percentile(r.lat, 100)
	return r
}

// percentile is the p-th (0 < p <= 100) of sorted by nearest rank; 0 none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(max(int(math.Ceil(p/100*float64(len(sorted)))), 1), len(sorted))-1]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func sleepUntil(ctx context.Context, t time.Time) {
	if d := time.Until(t); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
}

// latencyRuns sets up the workspaces, conversations and streams, warms up,
// then runs the probe and Wharf, one after the other.
func latencyRuns(ctx context.Context, w *wharf, cfg config) ([]verdict, error) {
	n := cfg.workspaces * cfg.perWorkspace
	progress("%d workspaces, %d conversations", cfg.workspaces, n)
	var convs []conversation
	for i := range cfg.workspaces {
		ws, err := w.workspace(ctx, fmt.Sprintf("ws%d", i+1))
		for j := 0; j < cfg.perWorkspace && err == nil; j++ {
			var c conversation
			c, err = w.newConversation(ctx, ws)
			convs = append(convs, c)
		}
		if err != nil {
			return nil, err
		}
	}
	ss, err := w.follow(ctx, n, func(i int) conversation { return convs[i] }, []string{daemontest.FirstUser},
		func(int) string { return "127.0.0.1" })
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)

	// A short turn each: every agent process starts and the path is warm;
	// a delta's envelope is the probe's payload.
	progress("warm-up: 20 chunks in each conversation")
	for _, c := range convs {
		if err := w.send(ctx, c, agentscript.Pace+" 100 20"); err != nil {
			return nil, err
		}
	}
	waitChunks(ctx, ss, 20, time.Now().Add(30*time.Second))
	if r := collect(ss, 20, 0); r.shortOf > 0 {
		return nil, fmt.Errorf("warm-up: %d of %d streams missed chunks (%d of %d read)", r.shortOf, n, len(r.lat), r.expected)
	}
	ss[0].mu.Lock()
	tmpl := ss[0].tmpl
	ss[0].mu.Unlock()
	if tmpl == nil {
		return nil, errors.New("warm-up: no text delta envelope read")
	}
	time.Sleep(500 * time.Millisecond) // the turns' ends

	perConv := float64(cfg.rate) / float64(n)
	count := int(perConv * cfg.window.Seconds())
	progress("probe: %d chunks a second over %d streams for %s", cfg.rate, n, cfg.window)
	pr, err := probeRun(ctx, n, perConv, count, cfg.rate, tmpl)
	if err != nil {
		return nil, err
	}
	progress("Wharf: %d chunks a second over %d conversations for %s", cfg.rate, n, cfg.window)
	for _, s := range ss {
		s.reset()
	}
	m, t0 := proc.StartCPU(), time.Now()
	for k, c := range convs { // spread like the probe's publishers
		sleepUntil(ctx, t0.Add(time.Duration(k)*time.Second/time.Duration(cfg.rate)))
		if err := w.send(ctx, c, fmt.Sprintf("%s %g %d", agentscript.Pace, perConv, count)); err != nil {
			return nil, err
		}
	}
	waitChunks(ctx, ss, count, t0.Add(cfg.window+15*time.Second))
	wr := collect(ss, count, m.Others())
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	ok := wr.p99 <= 20*time.Millisecond
	delivered := len(wr.lat) == wr.expected && wr.disorder == 0
	ratio := func(a, b time.Duration) string { return fmt.Sprintf("%.1f", float64(a)/float64(max(b, 1))) }
	what := fmt.Sprintf("%s chunks/s across %d conversations in %d workspaces, %g s", thousands(cfg.rate), n, cfg.workspaces, cfg.window.Seconds())
	return []verdict{
		{"Agent chunk → client envelope, p99 (" + what + ")",
			fmt.Sprintf("%s (p50 %s, max %s; %s chunks; other processes took %.0f %% of the machine)", ms(wr.p99), ms(wr.p50), ms(wr.max), thousands(len(wr.lat)), 100*wr.others),
			"≤ 20 ms", &ok},
		{"The same against the minimal SSE probe",
			fmt.Sprintf("p99 %s × probe, p50 %s × (probe: p50 %s, p99 %s, max %s; %s chunks; others %.0f %%)",
				ratio(wr.p99, pr.p99), ratio(wr.p50, pr.p50), ms(pr.p50), ms(pr.p99), ms(pr.max), thousands(len(pr.lat)), 100*pr.others),
			"ratio reported (no target)", nil},
		{"Chunks delivered, " + what,
			fmt.Sprintf("%s of %s; %d out of order; %d streams short (probe: %s of %s, %d out of order)",
				thousands(len(wr.lat)), thousands(wr.expected), wr.disorder, wr.shortOf, thousands(len(pr.lat)), thousands(pr.expected), pr.disorder),
			"every chunk, in order", &delivered},
	}, nil
}

// probeRun sends n × count envelopes like tmpl, perConv a second for each
// of n streams, through the probe, publishers spread as Wharf's prompts.
func probeRun(ctx context.Context, n int, perConv float64, count, rate int, tmpl []byte) (result, error) {
	p := &probe{subs: map[string][]chan []byte{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	c := &daemontest.Client{HTTP: sourceClient("127.0.0.1"), Base: "http://" + ln.Addr().String() + "/"}
	var ss []*stream
	defer func() { closeAll(ss) }()
	for i := range n {
		s, err := openStream(ctx, c, fmt.Sprintf("live?key=c%d", i))
		if err != nil {
			return result{}, fmt.Errorf("probe stream %d: %w", i, err)
		}
		ss = append(ss, s)
	}
	if err := waitReady(ctx, ss); err != nil {
		return result{}, fmt.Errorf("probe: %w", err)
	}
	m, t0 := proc.StartCPU(), time.Now()
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			start, key := t0.Add(time.Duration(k)*time.Second/time.Duration(rate)), fmt.Sprintf("c%d", k)
			for i := 0; i < count && ctx.Err() == nil; i++ {
				sleepUntil(ctx, start.Add(time.Duration(float64(i)*float64(time.Second)/perConv)))
				p.publish(key, withChunk(tmpl, agentscript.PaceChunk(i, time.Now())))
			}
		})
	}
	wg.Wait()
	waitChunks(ctx, ss, count, time.Now().Add(15*time.Second))
	return collect(ss, count, m.Others()), ctx.Err()
}

// idleMemory measures the child's memory per idle conversation in a
// workspace of its own, and returns one of them for sharing.
func idleMemory(ctx context.Context, w *wharf, cfg config) (verdict, conversation, error) {
	progress("child memory: %d idle conversations", cfg.idle)
	ws, err := w.workspace(ctx, "idle")
	if err != nil {
		return verdict{}, conversation{}, err
	}
	child := proc.SessionChild(w.d.Pid(), ws)
	if child == 0 {
		return verdict{}, conversation{}, fmt.Errorf("no session child found for workspace %s", ws)
	}
	sleepUntil(ctx, time.Now().Add(2*time.Second))
	before, err := settledRSS(ctx, child)
	var convs []conversation
	for i := 0; i < cfg.idle && err == nil; i++ {
		var c conversation
		c, err = w.newConversation(ctx, ws)
		convs = append(convs, c)
	}
	var after, agent int64
	if err == nil {
		sleepUntil(ctx, time.Now().Add(2*time.Second))
		after, err = settledRSS(ctx, child)
	}
	if err != nil {
		return verdict{}, conversation{}, err
	}
	for _, pid := range proc.Descendants(child) {
		if rss, err := proc.VmRSS(pid); err == nil {
			agent += rss
		}
	}
	per := float64(after-before) / float64(cfg.idle)
	return verdict{fmt.Sprintf("Child RSS per idle conversation (%d idle conversations, one workspace)", cfg.idle),
		fmt.Sprintf("%.1f KiB (the child's VmRSS %.1f MiB with none, %.1f MiB with %d; the agent process, not counted, %.1f MiB)",
			per/1024, float64(before)/(1<<20), float64(after)/(1<<20), cfg.idle, float64(agent)/(1<<20)),
		"none given: reported", nil}, convs[0], ctx.Err()
}

// settledRSS is the median of five VmRSS readings 200 ms apart.
func settledRSS(ctx context.Context, pid int) (int64, error) {
	var xs []int64
	for range 5 {
		rss, err := proc.VmRSS(pid)
		if err != nil {
			return 0, err
		}
		xs = append(xs, rss)
		sleepUntil(ctx, time.Now().Add(200*time.Millisecond))
	}
	slices.Sort(xs)
	return xs[2], ctx.Err()
}

// sharing opens cfg.subscribers streams on c and checks that the child
// opened one feed for all of them and that each read every chunk in order.
func sharing(ctx context.Context, w *wharf, cfg config, c conversation) ([]verdict, error) {
	progress("sharing: %d streams follow one conversation", cfg.subscribers)
	child := proc.SessionChild(w.d.Pid(), c.ws)
	base, err := proc.SteadySockets(child)
	if err != nil {
		return nil, err
	}
	var users []string
	for i := 0; i*streamsPerUser < cfg.subscribers; i++ {
		users = append(users, fmt.Sprintf("perf%d", i+1))
	}
	ss, err := w.follow(ctx, cfg.subscribers, func(int) conversation { return c }, users,
		func(i int) string { return fmt.Sprintf("127.0.0.%d", 10+i/streamsPerUser) })
	if err != nil {
		return nil, err
	}
	defer closeAll(ss)
	joined, err := proc.SteadySockets(child)
	if err != nil {
		return nil, err
	}
	if err := w.send(ctx, c, fmt.Sprintf("%s 100 %d", agentscript.Pace, cfg.fanChunks)); err != nil {
		return nil, err
	}
	t0 := time.Now()
	sleepUntil(ctx, t0.Add(time.Duration(cfg.fanChunks)*time.Second/200)) // halfway
	during, err := proc.SteadySockets(child)
	if err != nil {
		return nil, err
	}
	waitChunks(ctx, ss, cfg.fanChunks, t0.Add(time.Duration(cfg.fanChunks)*time.Second/100+15*time.Second))
	r := collect(ss, cfg.fanChunks, 0)
	one := joined-base == 1 && during-base == 1
	all := len(r.lat) == r.expected && r.disorder == 0
	return []verdict{
		{fmt.Sprintf("%d subscribers to one conversation: upstreams the child serves", cfg.subscribers),
			fmt.Sprintf("the child's open sockets %d with no subscriber, %d with %d (+%d), %d while the turn streamed",
				base, joined, cfg.subscribers, joined-base, during),
			"one upstream (+1)", &one},
		{fmt.Sprintf("%d subscribers to one conversation: delivery", cfg.subscribers),
			fmt.Sprintf("%s of %s chunks (%d × %d); %d out of order; %d streams short; p99 %s, max %s",
				thousands(len(r.lat)), thousands(r.expected), cfg.subscribers, cfg.fanChunks, r.disorder, r.shortOf, ms(r.p99), ms(r.max)),
			"every chunk to every subscriber, in order", &all},
	}, ctx.Err()
}

// thousands writes n with a comma every three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func report(cfg config, rows []verdict, took time.Duration) {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	n := cfg.workspaces * cfg.perWorkspace
	p("## Conversations with coding agents\n\n")
	p("Generated by `go run ./bench/chat` on %s UTC; the run took %s on %d CPUs (%s %s/%s). ",
		time.Now().UTC().Format("2006-01-02 15:04"), took.Round(time.Second), proc.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	p("A real `wharf serve` built from this checkout runs the scripted ACP agent (`fakes/acpagent`, as `--agent %s=…`), "+
		"all on loopback; every figure is from this one run, the latency judged absolutely and shown against a baseline measured in the same run.\n\n", agentID)
	p("| Measure | Figure | Target | Verdict |\n|---|---|---|---|\n")
	for _, r := range rows {
		v := "reported"
		if r.ok != nil {
			v = map[bool]string{true: "PASS", false: "FAIL"}[*r.ok]
		}
		p("| %s | %s | %s | %s |\n", r.measure, r.figure, r.target, v)
		progress("%-8s %s: %s (target %s)", v, r.measure, r.figure, r.target)
	}
	p("\nHow each figure is measured:\n\n")
	p("- **Latency.** %d workspaces (folders under the daemon's home, registered with `init` and started), %d conversations each; "+
		"one live stream per conversation subscribed to its `conversation` topic from the snapshot's cursor. After a warm-up turn, each "+
		"agent plays `pace` (fakes/agentscript), %g chunks a second for %g s, so %s a second in all (prompt k sent k/%d s after the first, or once the one before was answered); each chunk's "+
		"text carries the time the agent wrote it, and the client notes when it read the chunk's envelope (one machine, one clock). "+
		"Percentiles by nearest rank over every chunk. The path: the agent's stdout → the workspace child (ACP reader, conversation core, "+
		"its feed over the Unix socket) → the Hub (one upstream per conversation) → the live stream. Other processes' share of the machine "+
		"is the CPU time of every process but this program's tree, over the window.\n",
		cfg.workspaces, cfg.perWorkspace, float64(cfg.rate)/float64(n), cfg.window.Seconds(), thousands(cfg.rate), cfg.rate)
	p("- **Probe.** A minimal SSE fan-out in this program (a handler per stream draining its queue) with %d streams read by the same client; "+
		"%d publishers write a delta envelope captured from Wharf in the warm-up, with a fresh chunk, at the same rate, spread the same way; "+
		"latency from the publish to the read. It runs just before Wharf.\n", n, n)
	p("- **Child RSS.** A workspace of its own: its `wharf session` child's VmRSS (/proc, median of 5 readings) 2 s after it started, "+
		"and again 2 s after %d conversations were created (no turn), the difference over %d. The child's heap is collected when its "+
		"runtime decides, not on demand, so the figure is indicative; the agent process (one for all the conversations) is shown apart.\n",
		cfg.idle, cfg.idle)
	p("- **Sharing.** %d live streams (users of %d streams, device sessions of %d, from several loopback addresses, within the Hub's default "+
		"limits) follow one of those conversations; the child's open sockets (/proc/<pid>/fd: each feed the Hub opens holds one connection, "+
		"and the Hub keeps no idle one) are counted before, after every stream is ready, and halfway through a turn of %d chunks at 100 a "+
		"second, which every stream must read whole and in order.\n", cfg.subscribers, streamsPerUser, streamsPerSession, cfg.fanChunks)
	p("- **Streamed text.** A workspace of its own, one conversation; the agent plays `text` (fakes/agentscript): after a warm-up "+
		"turn, 16 turns of 1 MiB each, then one of 16 MiB, all in chunks of %d KiB. Each turn's time runs from the send to the "+
		"inventory (read every 10 ms) saying `completed`; the child's CPU time is from /proc. The same bytes in the same chunks cost "+
		"the same when text grows in linear time; the 16 MiB answer must then be whole in the snapshot.\n", textChunk>>10)
	p("- **Tool flood.** A workspace of its own, one conversation; the agent plays `tools 200 1048576`: 200 completed tool calls " +
		"of 1 MiB of output each. The child's VmRSS (median of 5 readings) 2 s after the turn completed, against the same before it " +
		"and the peak (VmHWM); the conversation keeps at most 64 MiB of items (hub/chat's bounds), trimming the oldest.\n")
	fmt.Print(b.String())
}
