package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/agentaccount"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub/service"
)

// W15: the agent-accounts listing (GET /api/hub/agent-accounts) with the
// real drivers over the fake login programs (fakes/agentlogin/…) found on
// the login runtimes' PATH, each a real process as the agents' are:
//   - ready: 20 clients at once, each reading the listing in a loop; the
//     statuses are shared (re-read once older than 2 s, never per
//     request), so p99 stays near the Hub state's (the same clients
//     reading GET /api/hub/state, in the same run);
//   - cold: the first listing of a fresh Hub, which starts every runtime
//     and waits at most 4 s for them;
//   - memory: the Hub's heap in use (after a GC) while serving the same
//     clients with no runtime started, with every runtime running, and
//     once the idle stop (5 min, moved on the Hub's clock) stopped them.

const (
	w15Clients  = 20
	w15Window   = 5 * time.Second
	w15MaxP99   = 50 * time.Millisecond
	w15MaxCold  = 4500 * time.Millisecond
	w15HeapGrow = 1.10 // heap with runtimes stopped ≤ this × the idle figure
)

// w15Fakes are the fake login programs, by the command each driver runs.
var w15Fakes = map[string]string{
	"codex":    "github.com/wharfhub/wharf/fakes/agentlogin/codexserver",
	"claude":   "github.com/wharfhub/wharf/fakes/agentlogin/claudecli",
	"gemini":   "github.com/wharfhub/wharf/fakes/agentlogin/geminicli",
	"opencode": "github.com/wharfhub/wharf/fakes/agentlogin/opencodeserve",
}

func runW15(ctx context.Context, e *env) ([]verdict, error) {
	root, err := mkTemp(e, "wharf-bench-w15-")
	if err != nil {
		return nil, err
	}
	bin, home := filepath.Join(root, "bin"), filepath.Join(root, "home")
	for _, d := range []string{bin, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	e.progress("W15: building the fake login programs")
	for name, pkg := range w15Fakes {
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s: %v: %s", pkg, err, out)
		}
	}
	clock := fakes.NewClock(time.Now())
	logins := agentaccount.New(agentaccount.Options{Env: []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + home}})
	w, err := e.openWharf(ctx, func(p *service.Ports) { p.AgentLogins, p.Clock = logins, clock }, nil)
	if err != nil {
		return nil, err
	}
	list := func() (time.Duration, error) {
		start := time.Now()
		status, _, raw, err := call(ctx, w.addr, http.MethodGet, "/api/hub/agent-accounts", bearer(w.session), nil, nil)
		if err != nil || status != http.StatusOK {
			return 0, fmt.Errorf("agent accounts: %d %.200s %v", status, raw, err)
		}
		return time.Since(start), nil
	}

	hammerState := func() ([]time.Duration, error) {
		return w15Hammer(ctx, func() (time.Duration, error) {
			start := time.Now()
			status, _, raw, err := call(ctx, w.addr, http.MethodGet, statePath, bearer(w.session), nil, nil)
			if err != nil || status != http.StatusOK {
				return 0, fmt.Errorf("state: %d %.200s %v", status, raw, err)
			}
			return time.Since(start), nil
		})
	}
	// The Hub state first, from the same 20 clients: the baseline of the
	// latency, and the heap of a Hub serving them with no runtime.
	e.progress("W15: %d clients for %s on the Hub state", w15Clients, w15Window)
	state, err := hammerState()
	if err != nil {
		return nil, err
	}
	idle := heapInUse()

	e.progress("W15: the first listing, every runtime starting")
	cold, err := list()
	if err != nil {
		return nil, err
	}

	e.progress("W15: %d clients for %s on the listing", w15Clients, w15Window)
	acc, err := w15Hammer(ctx, func() (time.Duration, error) { return list() })
	if err != nil {
		return nil, err
	}
	running := heapInUse()
	accP99, stateP99, answers := percentile(acc, 99), percentile(state, 99), len(acc)
	acc, state = nil, nil // the heap figures below are the Hub's, not these samples'
	e.progress("W15: the idle stop")
	clock.Advance(6 * time.Minute) // past the idle stop: every runtime ends
	stopped := heapInUse()
	for range 50 { // the runtimes' processes are reaped on their own goroutines
		if stopped = heapInUse(); float64(stopped) <= w15HeapGrow*float64(idle) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	grow := float64(stopped) / float64(idle)
	return []verdict{
		{"W15 agent-accounts listing, p99 at 20 clients", fmt.Sprintf("%s (%d answers; the Hub state's p99 %s; %.2f × it)",
			ms(accP99), answers, ms(stateP99), ratio(float64(accP99), float64(stateP99))),
			"≤ " + ms(w15MaxP99), accP99 <= w15MaxP99},
		{"W15 first listing, every runtime idle", fmt.Sprintf("%s, starting %d login runtimes", ms(cold), len(w15Fakes)),
			"≤ " + ms(w15MaxCold), cold <= w15MaxCold},
		{"W15 heap once the runtimes stopped", fmt.Sprintf("%.2f × idle (%s idle, %s with the runtimes, %s after the idle stop)",
			grow, mib(idle), mib(running), mib(stopped)), fmt.Sprintf("≤ %.2f × idle", w15HeapGrow), grow <= w15HeapGrow},
	}, nil
}

// w15Hammer runs f from w15Clients goroutines for w15Window and returns
// every latency, sorted.
func w15Hammer(ctx context.Context, f func() (time.Duration, error)) ([]time.Duration, error) {
	var (
		mu   sync.Mutex
		all  []time.Duration
		errs []error
		wg   sync.WaitGroup
	)
	end := time.Now().Add(w15Window)
	for range w15Clients {
		wg.Go(func() {
			for time.Now().Before(end) && ctx.Err() == nil {
				d, err := f()
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				all = append(all, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errs[0]
	}
	slices.Sort(all)
	return all, nil
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
