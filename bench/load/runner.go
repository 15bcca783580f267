package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// target is what a run drives: wrk on addr+path with hdr, wrk.lua's
// BENCH_* in env, threads (0: min(conns, CPUs)); or call, in loop.
type target struct {
	name, addr, path string
	hdr              http.Header
	env              []string
	threads          int
	call             func(ctx context.Context, w, n int) (status int, err error)
}

type run struct {
	Window             time.Duration
	OK, Non200, Errors int // answers (wrk: non-200 is its count of statuses ≥ 400), socket or call errors
	Lat                summary
	Server             time.Duration // this process's CPU over the window (getrusage), wrk's own aside
	Others             float64       // other processes' share of the machine over the window; NaN unknown
	Threads            []wrkThread   // with BENCH_BODY, wrk.lua's counts per thread
	Err                string
}

// wrkThread is what wrk.lua counted in a thread: requests sent, answers,
// the index of the last 200 (-1 none), 429s with no-store, by status.
type wrkThread struct {
	Sent, Answered, LastOK, NoStore int
	Status                          map[int]int
}

func (r run) RPS() float64 { return float64(r.OK+r.Non200) / r.Window.Seconds() }

func (r run) perReq(d time.Duration) time.Duration { return d / time.Duration(max(1, r.OK+r.Non200)) }

type meter struct {
	at        time.Time
	cpu, busy time.Duration
	busyOK    bool
}

// mark counts reaped children: the git commands and sessions Wharf ran
// are its cost; wrk's is subtracted by the runs.
func mark() (m meter) {
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru)
		m.cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	m.busy, m.busyOK = machineBusy()
	m.at = time.Now()
	return m
}

// fill sets r's figures of m0..m1; client is wrk's CPU, a reaped child's.
func (r *run) fill(m0, m1 meter, client time.Duration) {
	if r.Server, r.Others = m1.cpu-m0.cpu-client, math.NaN(); m0.busyOK && m1.busyOK {
		r.Others = max(0, float64(m1.busy-m0.busy-r.Server-client)/(float64(m1.at.Sub(m0.at))*float64(runtime.NumCPU())))
	}
}

// measure makes one run of t at conns connections over window: by wrk
// (whole seconds, no warm-up), or by loop for a call.
func (e *env) measure(ctx context.Context, t target, conns int, window time.Duration) (r run) {
	if t.call != nil {
		return e.loop(ctx, conns, window, 0, t.call)
	}
	args := []string{"-t", strconv.Itoa(cmp.Or(t.threads, min(conns, runtime.NumCPU()))), "-c", strconv.Itoa(conns),
		"-d", fmt.Sprintf("%.0fs", math.Ceil(window.Seconds())), "-s", e.script}
	for k, vs := range t.hdr {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	cmd := exec.CommandContext(ctx, e.wrk, append(args, "http://"+t.addr+t.path)...)
	var out bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = append(os.Environ(), t.env...), &out, &out
	m0 := mark()
	err := cmd.Run()
	if m1 := mark(); err == nil {
		r.fill(m0, m1, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		err = parseWrk(out.String(), &r)
	}
	if err != nil {
		r.Err = fmt.Sprintf("wrk: %v: %q", err, out.String())
		e.progress("  %s at %d conns: %s", t.name, conns, r.Err)
	}
	return r
}

// parseWrk reads wrk.lua's lines of a wrk report into r.
func parseWrk(s string, r *run) error {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		n := make([]int, len(f))
		for i := 1; i < len(f); i++ {
			n[i], _ = strconv.Atoi(strings.SplitN(f[i], ":", 2)[0])
		}
		if us := func(i int) time.Duration { return time.Duration(n[i]) * time.Microsecond }; len(f) == 8 && f[0] == "bench-run" {
			r.Window, r.Errors, r.Non200, r.OK, r.Lat = us(2), n[3], n[4], n[1]-n[4], summary{N: n[1], P50: us(5), P99: us(6), Max: us(7)}
		} else if len(f) >= 5 && f[0] == "bench-thread" {
			th := wrkThread{Sent: n[1], Answered: n[2], LastOK: n[3], NoStore: n[4], Status: map[int]int{}}
			for _, kv := range f[5:] {
				k, v, _ := strings.Cut(kv, ":")
				ki, _ := strconv.Atoi(k)
				th.Status[ki], _ = strconv.Atoi(v)
			}
			r.Threads = append(r.Threads, th)
		}
	}
	if r.Window <= 0 {
		return errors.New("no figures in wrk's report")
	}
	if r.Threads != nil { // answers counted by status: non-200 is exact
		r.OK = 0
		for _, th := range r.Threads {
			r.OK += th.Status[200]
		}
		r.Non200 = r.Lat.N - r.OK
	}
	return nil
}

// loop calls f from conns workers, -warmup then window: closed loop, or with
// pace, open: worker w's n-th call due at w × pace / conns + n × pace, its
// latency counted from then (a stall is charged to every call it delays).
func (e *env) loop(ctx context.Context, conns int, window, pace time.Duration, f func(ctx context.Context, w, n int) (int, error)) run {
	start := time.Now()
	from, until := start.Add(e.cfg.warmup), start.Add(e.cfg.warmup+window)
	r, m0 := run{Window: window}, make(chan meter, 1)
	go func() { waitUntil(ctx, from); m0 <- mark() }()
	var mu sync.Mutex
	var lats []time.Duration
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			var mine []time.Duration
			non200, errs := 0, 0
			for n := 0; errs < 100 && ctx.Err() == nil; n++ {
				t0 := time.Now()
				if pace > 0 {
					t0 = start.Add(time.Duration(w)*pace/time.Duration(conns) + time.Duration(n)*pace)
					waitUntil(ctx, t0)
				}
				if !t0.Before(until) {
					break
				}
				status, err := f(ctx, w, n)
				if in := !t0.Before(from); in && err == nil {
					mine, non200 = append(mine, time.Since(t0)), non200+b2i(status != http.StatusOK)
				} else if in {
					errs++
				}
			}
			mu.Lock()
			lats, r.Non200, r.Errors = append(lats, mine...), r.Non200+non200, r.Errors+errs
			mu.Unlock()
		})
	}
	wg.Wait()
	r.Lat, r.OK = summarize(lats), len(lats)-r.Non200
	r.fill(<-m0, mark(), 0)
	return r
}

// rounds holds runs[c][k], round k at conns[c]: a run per target, in order.
type rounds struct {
	conns []int
	names []string
	runs  [][][]run
	last  []run // the last round's runs
}

func (e *env) rounds(ctx context.Context, label string, conns []int, ts ...target) (*rounds, error) {
	rs := &rounds{conns: conns, runs: make([][][]run, len(conns))}
	for _, t := range ts {
		rs.names = append(rs.names, t.name)
	}
	for k := 0; k < e.cfg.rounds && ctx.Err() == nil; k++ {
		for c, n := range conns {
			e.progress("%s: round %d/%d at %d conns", label, k+1, e.cfg.rounds, n)
			rs.last = make([]run, len(ts))
			for j, t := range ts {
				rs.last[j] = e.measure(ctx, t, n, e.cfg.duration)
			}
			rs.runs[c] = append(rs.runs[c], rs.last)
		}
	}
	return rs, ctx.Err()
}

func (rs *rounds) med(c int, f func(row []run) float64) float64 {
	var xs []float64
	for _, row := range rs.runs[c] {
		xs = append(xs, f(row))
	}
	return median(xs)
}

func (rs *rounds) medRun(c, j int, f func(run) float64) float64 {
	return rs.med(c, func(x []run) float64 { return f(x[j]) })
}

// list is f of every round at c.
func (rs *rounds) list(c int, f func(row []run) string) string {
	var parts []string
	for _, row := range rs.runs[c] { // starred: other processes took more than 10 % of the machine during a run
		parts = append(parts, f(row)+strings.Repeat("*", b2i(slices.ContainsFunc(row, func(r run) bool { return r.Others > 0.10 }))))
	}
	return fmt.Sprintf("median of %d rounds: %s", len(rs.runs[c]), strings.Join(parts, ", "))
}

// answers sums target j's non-200 and errors at c; ok: it had a 200.
func (rs *rounds) answers(c, j int) (non200, errs int, ok bool) {
	for _, x := range rs.runs[c] {
		non200, errs, ok = non200+x[j].Non200, errs+x[j].Errors+b2i(x[j].Err != ""), ok || x[j].OK > 0
	}
	return non200, errs, ok
}

// verdict is one target's outcome: a row of the Verdicts table.
type verdict struct {
	Name, Figure, Target string
	OK                   bool
}

// reported is the Target of a figure an issue asks for without a bound:
// its verdict reads "reported".
const reported = "none: reported"

// word is the Verdict column: PASS, **FAIL** or reported.
func (v verdict) word() string {
	if v.Target == reported {
		return "reported"
	}
	return passFail(v.OK)
}

type report struct {
	started             time.Time
	args                []string
	elapsed             time.Duration
	cfg                 config
	others              float64 // other processes' share of the machine over the whole run
	verdicts            []verdict
	cpu, kernel, noFile string
}

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	var ran, missed []string
	for _, w := range workloads {
		if r.cfg.has(w.name) {
			ran = append(ran, w.name)
		}
	}
	p("# Wharf load benchmark results\n\nGenerated by `go run ./bench/load %s` (`just bench` runs it with `-out bench/RESULTS.md`) on %s; "+
		"the run took %s. Every figure is from that one run on this machine.\n\n## Machine\n\n| | |\n|---|---|\n| CPU | %s |\n| CPUs, GOMAXPROCS "+
		"| %d, %d |\n| Go | %s %s/%s |\n| Kernel | %s |\n| Open-file limit (soft / hard) | %s |\n| CPU used by other processes during the "+
		"run | %s of the machine |\n\n", strings.Join(r.args, " "), r.started.UTC().Format("2006-01-02 15:04 MST"), r.elapsed.Round(time.Second),
		r.cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, r.kernel, r.noFile, pct(r.others))
	p("## Method\n\nbench/README.md describes the workloads and the method. Workloads run: %s. **Wharf** is built by `daemon.Open`, as "+
		"`cmd/wharf` builds it (its connection caps and live stream limits raised to %d: every client is 127.0.0.1, with one session); it and every baseline (**probe**) are served "+
		"by `Daemon.Serve`. wrk drives every request/response run (`-t min(conns, CPUs)`, `-d` the %s window in whole seconds, no warm-up, "+
		"`wrk.lua`); non-200 is wrk's count of statuses ≥ 400, but W9 and W10 count every status. In-process loops (W9's raw SQLite, W5's "+
		"POSTs) discard %s of warm-up. **Server CPU/req** is this process's CPU per answer (getrusage, with the `git` children it reaped, "+
		"less wrk's own): wrk is another process, so it is the servers' alone. Servers run one at a time, in %d rounds; verdicts use the "+
		"median of the per-round ratios; `*` marks a round during which other processes took over 10 %% of the machine. Percentiles by "+
		"nearest rank.\n\n## Verdicts\n\n| Target | Measured | Target | Verdict |\n|---|---|---|---|\n",
		strings.Join(ran, ", "), benchMaxConns, r.cfg.duration, r.cfg.warmup, r.cfg.rounds)
	for _, v := range r.verdicts {
		if p("| %s | %s | %s | %s |\n", v.Name, v.Figure, v.Target, v.word()); !v.OK {
			missed = append(missed, v.Name)
		}
	}
	p("\n## Reading these figures\n\nMissed in this run: %s.\n\n", strings.Join(append(missed, "none")[:max(1, len(missed))], "; "))
	if !math.IsNaN(r.others) && r.others > 0.05 {
		p("Other processes used %s of the machine's CPU during this run: some figures carry outside noise.\n\n", pct(r.others))
	}
	p("wrk and the servers share the machine's CPUs; the ratios, not the absolute figures, compare across machines.\n")
	return b.String()
}

// machineBusy is all processes' CPU since boot (/proc/stat user, nice,
// system, steal): interrupt time, where getrusage charges no one, aside.
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	f, ticks := strings.Fields(strings.SplitN(string(b), "\n", 2)[0]), int64(0)
	for _, i := range []int{1, 2, 3, 8} {
		if len(f) < 9 || f[0] != "cpu" || err != nil {
			return 0, false
		}
		n, e := strconv.ParseInt(f[i], 10, 64)
		ticks, err = ticks+n, e
	}
	return time.Duration(ticks) * 10 * time.Millisecond, err == nil
}

// machine reads the CPU model, the kernel release and the open-file limits.
func (r *report) machine() {
	b, _ := os.ReadFile("/proc/cpuinfo")
	_, v, _ := strings.Cut(string(b), "model name")
	r.cpu = strings.TrimSpace(strings.TrimPrefix(strings.SplitN(v, "\n", 2)[0], "\t:"))
	b, _ = os.ReadFile("/proc/sys/kernel/osrelease")
	var rl syscall.Rlimit // the os package raised the soft limit to the hard one
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	r.kernel, r.noFile = strings.TrimSpace(string(b)), fmt.Sprintf("%d / %d", rl.Cur, rl.Max)
}

type summary struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

// percentile is the p-th (0 < p <= 100) of sorted by nearest rank: the
// smallest value with at least p % of the values at or below it; 0 none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(max(int(math.Ceil(p/100*float64(len(sorted)))), 1), len(sorted))-1]
}

// summarize sorts lat in place.
func summarize(lat []time.Duration) summary {
	slices.Sort(lat)
	return summary{len(lat), percentile(lat, 50), percentile(lat, 90), percentile(lat, 99), percentile(lat, 100)}
}

// median is the median of xs (unmodified), NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

func ms(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f ms", d.Seconds()*1e3)
}

func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", d.Seconds()*1e6) }
func kb(x float64) string       { return fmt.Sprintf("%.1f KB", x/1024) }
func mib(x uint64) string       { return fmt.Sprintf("%.1f MiB", float64(x)/(1<<20)) }
func rps(x float64) string      { return fmt.Sprintf("%.0f", x) }
func passFail(ok bool) string   { return map[bool]string{true: "PASS", false: "**FAIL**"}[ok] }

func errNote(err string) string {
	return map[bool]string{true: "; " + err}[err != "" && err != "<nil>"]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
