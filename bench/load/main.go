// Command load is Wharf's load benchmark: the workloads of bench/README.md,
// each judged against a baseline measured in the same run, written as one
// Markdown report. The Wharf under test is built by adapters/daemon, as
// cmd/wharf builds it; wrk drives every request/response workload.
//
// Usage (from the module root, as `just bench` runs it):
//
//	go run ./bench/load -out bench/RESULTS.md
package main

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/service"
)

type config struct {
	rounds                                      int
	warmup, duration, attackOver, live, w12Idle time.Duration
	out, wrk                                    string
	workloads                                   map[string]bool
}

func (c config) has(name string) bool { return c.workloads[name] }

// conns are the connection counts of W1, W2, state1 and state50.
var conns = []int{1, 32, 128}

func main() {
	// An interrupt cancels the run: every clean-up still happens.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runMain(ctx, os.Args[1:])
	if stop(); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func runMain(ctx context.Context, args []string) error {
	var cfg config
	fs, names := flag.NewFlagSet("load", flag.ContinueOnError), []string(nil)
	fs.IntVar(&cfg.rounds, "rounds", 3, "rounds of the runs judged by ratio, and of W9; verdicts use the median")
	fs.DurationVar(&cfg.warmup, "warmup", 500*time.Millisecond, "discarded warm-up of the in-process loops (W9's raw SQLite, W5's POSTs)")
	fs.DurationVar(&cfg.duration, "duration", 2500*time.Millisecond, "measured window of each run (wrk: rounded up to whole seconds)")
	fs.DurationVar(&cfg.attackOver, "attack-over", 10*time.Second, "W10: time over which the 100 wrong passwords are spread")
	fs.DurationVar(&cfg.live, "live-window", 20*time.Second, "W3, W4 and W7: how long the activity changes go on")
	fs.DurationVar(&cfg.w12Idle, "w12-idle", 30*time.Second, "W12: each stream is owed this / 15 s keepalives in a window 1 s longer")
	fs.StringVar(&cfg.wrk, "wrk", "wrk", "wrk `command`, which drives every request/response workload")
	fs.StringVar(&cfg.out, "out", "", "write the Markdown report to this `file` (overwritten); default stdout")
	for _, w := range workloads {
		names = append(names, w.name)
	}
	wls := fs.String("workloads", strings.Join(names, ","), "comma-separated `list` of workloads to run (they run in this order; w7 runs w3)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return cmp.Or(err, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	cfg.workloads = map[string]bool{}
	for f := range strings.SplitSeq(*wls, ",") {
		if name := strings.ToLower(strings.TrimSpace(f)); !slices.Contains(names, name) {
			return fmt.Errorf("-workloads: unknown workload %q (known: %s)", f, strings.Join(names, ", "))
		} else {
			cfg.workloads[name] = true
		}
	}
	cfg.workloads["w3"] = cfg.has("w3") || cfg.has("w7") // W7 is judged against W3
	if cfg.rounds < 1 || cfg.rounds > 20 || cfg.duration < 100*time.Millisecond || cfg.warmup < 0 || cfg.attackOver < time.Second ||
		cfg.live < time.Second || cfg.w12Idle < 15*time.Second {
		return errors.New("-rounds must be in 1..20, -duration at least 100ms, -attack-over and -live-window at least 1s, " +
			"-w12-idle at least 15s, -warmup not negative")
	}
	budget := 5 * time.Minute // the whole run's deadline: each selected workload's bound, and a margin
	for _, w := range workloads {
		if cfg.has(w.name) {
			budget += w.limit(cfg)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	rep, err := runAll(ctx, cfg, args, func(format string, a ...any) { fmt.Fprintf(os.Stderr, "load: "+format+"\n", a...) })
	if err != nil {
		return err
	}
	if md := rep.markdown(); cfg.out == "" {
		io.WriteString(os.Stdout, md)
	} else if err := os.WriteFile(cfg.out, []byte(md), 0o644); err != nil {
		return err
	}
	for _, v := range rep.verdicts {
		fmt.Fprintf(os.Stderr, "load: %-4s %s: %s (target %s)\n", strings.Trim(v.word(), "*"), v.Name, v.Figure, v.Target)
	}
	return nil
}

// workload is an entry of the benchmark: the group whose servers it shares
// (closed before the next group's starts) and a bound on its time.
type workload struct {
	name, group string
	run         func(ctx context.Context, e *env) ([]verdict, error)
	limit       func(c config) time.Duration
}

var workloads = []workload{
	{"w1", "hub", runW1, func(c config) time.Duration { return roundsLimit(c, 3) + buildLimit }},
	{"w2", "hub", runW2, func(c config) time.Duration { return roundsLimit(c, 2) + time.Minute }},
	{"w10", "hub", runW10, func(c config) time.Duration { return 2 * (c.attackOver + time.Minute) }},
	{"state1", "hub", stateOf("state1", 1, 1, 0.80), func(c config) time.Duration { return roundsLimit(c, 2) + buildLimit }},
	{"w11", "hub", runW11, func(c config) time.Duration { return w11Limit + buildLimit }},
	{"w9", "hub", runW9, func(c config) time.Duration { return roundsLimit(c, 1) + buildLimit }},
	{"state50", "hub", stateOf("state50", 50, 10, 0.50), func(c config) time.Duration { return roundsLimit(c, 2) + buildLimit + 5*time.Minute }},
	{"w8", "hub", runW8, func(c config) time.Duration { return buildLimit + 10*time.Minute }},
	{"w14", "hub", runW14, func(c config) time.Duration { return buildLimit + 15*time.Minute }},
	{"w15", "hub", runW15, func(c config) time.Duration { return buildLimit + 3*time.Minute }},
	{"creds50", "hub", runCreds50, func(c config) time.Duration { return roundsLimit(c, 2) + buildLimit + time.Minute }},
	{"w3", "live", runScenario(w3), func(c config) time.Duration { return 3 * (c.live + 90*time.Second) }},
	{"w7", "live", runScenario(w7), func(c config) time.Duration { return 2*(c.live+90*time.Second) + slowAfterLimit }},
	{"w4", "live", runScenario(w4), func(c config) time.Duration { return 2 * (c.live + 150*time.Second) }},
	{"w5", "live", runScenario(w5), func(c config) time.Duration { return 2 * (c.warmup + w5Window + time.Minute) }},
	{"w6", "live", runScenario(w6), func(c config) time.Duration { return 2 * (w6Spread + w6MaxHello + w6Settle + time.Minute) }},
	{"w12", "live", runScenario(w12), func(c config) time.Duration { return 2 * (c.w12Idle + 90*time.Second) }},
	{"w13", "live", runW13, func(c config) time.Duration { return 2*(w13Turns*(w13TurnWait+w13TurnGap)+time.Minute) + w13StallWait }},
	{"w16", "push", runW16, func(c config) time.Duration { return w16Limit }},
	{"d1", "d1", runD1, func(c config) time.Duration { return buildLimit + d1Limit }},
	{"crash", "crash", runCrash, func(c config) time.Duration { return buildLimit + 3*time.Minute }},
	{"m1", "metrics", runM1, func(c config) time.Duration { return roundsLimit(c, 2) + time.Minute }},
	{"m2", "metrics", runM2, func(c config) time.Duration { return m2Limit }},
}

func roundsLimit(c config, n int) time.Duration {
	return time.Duration(len(conns)*c.rounds*n) * (c.warmup + c.duration + 3*time.Second)
}

//go:embed wrk.lua
var wrkScript []byte

// env is what the workloads share; closeGroup releases the group's servers.
type env struct {
	cfg      config
	progress func(string, ...any)
	tmp      string // removed at the end: wrk's script, the built ./cmd/wharf
	bin      string // ./cmd/wharf built for the workspace sessions, once a workload needs it
	wrk      string // wrk's path
	script   string // wrkScript's file
	closers  []func()
	hubs     *hubGroup
	live     *liveHub
}

func (e *env) onClose(f func()) { e.closers = append(e.closers, f) }

func (e *env) closeGroup() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers, e.hubs, e.live = nil, nil, nil
}

func runAll(ctx context.Context, cfg config, args []string, progress func(string, ...any)) (*report, error) {
	e, r := &env{cfg: cfg, progress: progress}, &report{started: time.Now(), args: args, cfg: cfg}
	r.machine()
	var err error
	if e.tmp, err = os.MkdirTemp("", "wharf-bench-"); err != nil {
		return nil, err
	}
	defer func() { e.closeGroup(); os.RemoveAll(e.tmp) }()
	if e.wrk, err = exec.LookPath(cfg.wrk); err != nil {
		return nil, fmt.Errorf("the benchmark needs wrk (apt-get install -y wrk; `just bench` installs it when run as root), or -wrk: %w", err)
	}
	if e.script = filepath.Join(e.tmp, "wrk.lua"); os.WriteFile(e.script, wrkScript, 0o600) != nil {
		return nil, fmt.Errorf("writing %s", e.script)
	}
	m0, group := mark(), ""
	for _, w := range workloads {
		if !cfg.has(w.name) || err != nil {
			continue
		}
		if w.group != group {
			e.closeGroup()
			group = w.group
		}
		var vs []verdict
		if vs, err = w.run(ctx, e); err == nil && ctx.Err() == nil {
			r.verdicts = append(r.verdicts, vs...)
		} else {
			err = errors.Join(errors.New(w.name), err, ctx.Err())
		}
	}
	var all run
	all.fill(m0, mark(), 0)
	r.elapsed, r.others = time.Since(r.started), all.Others
	return r, err
}

// waitUntil waits for the clock to reach at; false when ctx ended first.
func waitUntil(ctx context.Context, at time.Time) bool {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return ctx.Err() == nil
}

const (
	benchUser, benchPassword = "bench", "correct horse battery staple" // each Wharf's one user
	buildLimit               = 5 * time.Minute                         // the one `go build` of ./cmd/wharf
	// benchMaxConns is the daemon's connection caps and the Hub's live stream
	// limits: every client is 127.0.0.1 with one session, W4 holds 5,000.
	benchMaxConns = 8192
)

// benchLoginLimits are hub's defaults, spelled out for W10's verdicts.
var benchLoginLimits = service.LoginLimits{PerAddress: 5, AddressWindow: time.Minute, PerName: 20, NameWindow: 15 * time.Minute}

// serve serves h through d (Wharf and baselines alike) on 127.0.0.1:0.
func (e *env) serve(d *daemon.Daemon, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Serve(ctx, ln, h) }()
	e.onClose(func() { cancel(); <-done })
	return ln.Addr().String(), nil
}

type wharf struct {
	addr, session string // session: the user's bearer device session
	d             *daemon.Daemon
}

// openWharf builds a Wharf with daemon.Open in a fresh temp state dir and
// logs the user in: adapt swaps ports, wrap wraps the handler served,
// configure (W16's push settings) amends the daemon's Config last.
func (e *env) openWharf(ctx context.Context, adapt func(*service.Ports), wrap func(http.Handler) http.Handler,
	configure ...func(*daemon.Config)) (*wharf, error) {
	dir, err := mkTemp(e, "wharf-bench-state-")
	if err != nil {
		return nil, err
	}
	var child []string
	if e.bin != "" {
		child = []string{e.bin}
	}
	cfg := daemon.Config{StateDir: dir, SessionCommand: child, Adapt: adapt, MaxConns: benchMaxConns,
		MaxConnsPerClient: benchMaxConns, Hub: service.Config{Version: "bench", LoginLimits: benchLoginLimits,
			LiveLimits: live.Limits{PerDeviceSession: benchMaxConns, PerUser: benchMaxConns, Total: benchMaxConns}}}
	for _, f := range configure {
		f(&cfg)
	}
	d, err := daemon.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	e.onClose(func() { d.Close() })
	h, w := d.Handler(), &wharf{d: d}
	if wrap != nil {
		h = wrap(h)
	}
	if err = d.Hub().AddUser(ctx, benchUser, benchPassword); err == nil {
		w.addr, err = e.serve(d, h)
	}
	if err == nil {
		w.session, err = w.login(ctx, "bench")
	}
	return w, err
}

// buildChild builds ./cmd/wharf once for the workspace sessions.
func (e *env) buildChild(ctx context.Context) error {
	if e.bin != "" {
		return nil
	}
	e.progress("building ./cmd/wharf for the workspace sessions")
	ctx, cancel := context.WithTimeout(ctx, buildLimit)
	defer cancel()
	bin, err := daemontest.BuildBinary(ctx, e.tmp)
	if err != nil {
		return fmt.Errorf("%w (run from the module root)", err)
	}
	e.bin = bin
	return nil
}

func mkTemp(e *env, prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil {
		e.onClose(func() { os.RemoveAll(dir) })
	}
	return dir, err
}

// httpClient makes the benchmark's own calls; never through a proxy.
var httpClient = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 512}, Timeout: time.Minute}

// call sends a request with a JSON body (a []byte as is, else marshalled)
// and, when out is set, decodes a 200 answer into it: any other is an error.
func call(ctx context.Context, addr, method, path string, hdr http.Header, body, out any) (int, http.Header, []byte, error) {
	b, ok := body.([]byte)
	if !ok && body != nil {
		b, _ = json.Marshal(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		return 0, nil, nil, err
	}
	if req.Header = hdr.Clone(); req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err == nil && out != nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	} else if err == nil && out != nil {
		err = json.Unmarshal(raw, out)
	}
	return resp.StatusCode, resp.Header, raw, err
}

func bearer(sessionID string) http.Header {
	return http.Header{"Authorization": {"Bearer " + sessionID}}
}

// browser is the headers of a cookie-authenticated browser fetch.
func (w *wharf) browser(cookie, origin, site string) http.Header {
	_, port, _ := net.SplitHostPort(w.addr)
	c := &http.Cookie{Name: httpapi.CookiePrefix + "_hub_" + port, Value: cookie}
	return http.Header{"Cookie": {c.String()}, "Origin": {origin}, "Sec-Fetch-Site": {site}}
}

// login logs the user in: the session id, which the cookie must carry.
func (w *wharf) login(ctx context.Context, label string) (string, error) {
	var out struct{ SessionID string }
	_, h, _, err := call(ctx, w.addr, http.MethodPost, "/login", http.Header{"Origin": {"http://" + w.addr}, "Sec-Fetch-Site": {"same-origin"}},
		map[string]string{"name": benchUser, "password": benchPassword, "deviceLabel": label}, &out)
	_, port, _ := net.SplitHostPort(w.addr)
	i := slices.IndexFunc((&http.Response{Header: h}).Cookies(), func(c *http.Cookie) bool {
		return c.Name == httpapi.CookiePrefix+"_hub_"+port && c.Value == out.SessionID
	})
	if err == nil && (out.SessionID == "" || i < 0) {
		err = errors.New("login: no session, or a cookie that does not carry it")
	}
	return out.SessionID, err
}

// register registers each folder (the Hub git-inits it; not started).
func (w *wharf) register(ctx context.Context, paths ...string) (ids []string, err error) {
	for _, p := range paths {
		var act struct{ ID string }
		if _, _, _, err = call(ctx, w.addr, http.MethodPost, "/api/hub/workspaces", bearer(w.session), map[string]any{"path": p, "init": true, "start": false}, &act); err != nil {
			return ids, err
		}
		ids = append(ids, act.ID)
	}
	return ids, nil
}

// lifecycle starts or stops (op) workspace id and checks the answer.
func (w *wharf) lifecycle(ctx context.Context, id, op string) error {
	var act struct {
		ID                  string
		Running, WasRunning bool
	}
	_, _, _, err := call(ctx, w.addr, http.MethodPost, "/api/hub/sessions/"+id+"/"+op, bearer(w.session), nil, &act)
	if err == nil && (act.ID != id || act.Running != (op == "start") || (op == "stop" && !act.WasRunning)) {
		err = fmt.Errorf("%s %s: unexpected answer %+v", op, id, act)
	}
	return err
}
