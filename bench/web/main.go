// Command perf measures the dashboard in a headless Chromium against a
// Hub on loopback, and prints the figures as Markdown:
//
//	go run ./bench/web
//
// It measures the first load with 50 workspaces (the bytes the page's
// requests transferred, gzip and headers included and the live stream
// left out, and the time from navigation to the workspace list on screen,
// cache disabled, median of several loads), then the responsiveness of
// the list of 500 running workspaces whose activity changes 100 times a
// second (frame intervals from requestAnimationFrame, long tasks over
// 50 ms, and the main thread's busy time from Chromium's metrics).
//
// The Hub runs in this process (daemon.Open) with the real adapters except
// the workspace backend, which is the fake one (fakes.Backend): 500 real
// sessions would not fit the machine, and the fake lets the program change
// each workspace's activity at will. The page cannot tell: it sees the
// same API and live stream. It needs Chromium and git; it is no test.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/fakes"
)

func main() {
	few := flag.Int("workspaces", 50, "workspaces for the first load")
	many := flag.Int("many", 500, "workspaces for the responsiveness run")
	rate := flag.Int("rate", 100, "activity changes per second in the responsiveness run")
	secs := flag.Int("seconds", 10, "length of the responsiveness run")
	loads := flag.Int("loads", 7, "cold loads measured")
	flag.Parse()
	if err := run(*few, *many, *rate, *secs, *loads); err != nil {
		log.Fatal(err)
	}
}

func run(few, many, rate, secs, loads int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	chromium, ok := browsertest.Chromium()
	if !ok {
		return fmt.Errorf("no Chromium: install the chromium package or set WHARF_CHROMIUM")
	}
	tmp, err := os.MkdirTemp("", "wharf-perf-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ip, err := browsertest.StartInProcess(ctx, tmp)
	if err != nil {
		return err
	}
	defer ip.Close()
	h, backend := ip.Hub, ip.Backend
	api, err := h.Login(ctx, "perf")
	if err != nil {
		return err
	}
	ids, err := register(ctx, api, tmp, 0, few)
	if err != nil {
		return err
	}

	b, err := browsertest.NewBrowser(ctx, chromium)
	if err != nil {
		return err
	}
	defer b.Close()
	p, err := b.NewPage(true)
	if err != nil {
		return err
	}
	if err := p.Emulate(browsertest.Desktop); err != nil {
		return err
	}
	if err := p.LogIn(h); err != nil {
		return err
	}
	fmt.Printf("## The dashboard in Chromium (%s)\n\n", time.Now().UTC().Format("2006-01-02"))
	if err := firstLoad(p, h, len(ids), loads); err != nil {
		return err
	}

	more, err := register(ctx, api, tmp, few, many)
	if err != nil {
		return err
	}
	ids = append(ids, more...)
	for _, id := range ids {
		if err := api.Do(ctx, "POST", "/api/hub/sessions/"+id+"/start", nil, nil); err != nil {
			return fmt.Errorf("start %s: %w", id, err)
		}
	}
	return responsiveness(p, h, backend, ids, rate, secs)
}

// register makes folders ws<from>..ws<to-1> and registers them (git init
// through the API's confirmation).
func register(ctx context.Context, api *browsertest.Client, dir string, from, to int) ([]string, error) {
	var ids []string
	for i := from; i < to; i++ {
		path := filepath.Join(dir, "home", fmt.Sprintf("ws%03d", i))
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
		var res struct {
			Workspace struct{ ID string } `json:"workspace"`
		}
		if err := api.Do(ctx, "POST", "/api/hub/workspaces/configure",
			map[string]any{"path": path, "displayName": fmt.Sprintf("Workspace %03d", i), "init": true}, &res); err != nil {
			return nil, fmt.Errorf("register %s: %w", path, err)
		}
		ids = append(ids, res.Workspace.ID)
	}
	return ids, nil
}

// firstLoad loads / with an empty, disabled cache several times and
// reports the median bytes and time to the list.
func firstLoad(p *browsertest.Page, h *browsertest.Hub, n, loads int) error {
	var mu sync.Mutex
	sizes := map[network.RequestID]float64{}
	urls := map[network.RequestID]string{}
	p.OnEvent(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			urls[e.RequestID] = e.Request.URL
		case *network.EventLoadingFinished:
			sizes[e.RequestID] = e.EncodedDataLength
		}
	})
	if _, err := chromedp.Call(p.Ctx, network.Enable, network.EnableParams{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(p.Ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return err
	}
	var times, totals []float64
	var requests int
	for i := 0; i < loads; i++ {
		if _, err := chromedp.Call(p.Ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
			return err
		}
		mu.Lock()
		clear(sizes)
		clear(urls)
		mu.Unlock()
		if err := p.Do(chromedp.Navigate(h.URL)); err != nil {
			return err
		}
		ready := fmt.Sprintf(`performance.getEntriesByName('wharf:list-ready').length > 0 && document.querySelectorAll('.ws-row').length === %d`, n)
		if err := p.Wait(ready, 20*time.Second); err != nil {
			return err
		}
		ms, err := browsertest.Eval[float64](p, `performance.getEntriesByName('wharf:list-ready')[0].startTime`)
		if err != nil {
			return err
		}
		// Let the requests in flight finish (the state answer's, say).
		if err := p.Wait(`document.readyState === 'complete'`, 10*time.Second); err != nil {
			return err
		}
		mu.Lock()
		total := 0.0
		requests = 0
		for id, size := range sizes {
			if strings.Contains(urls[id], "/api/hub/live") {
				continue
			}
			total += size
			requests++
		}
		mu.Unlock()
		times = append(times, ms)
		totals = append(totals, total)
	}
	fmt.Printf("### First load, %d workspaces, cache disabled (%d loads)\n\n", n, loads)
	fmt.Printf("| Measure | Median | Min | Max | Budget |\n|---|---|---|---|---|\n")
	fmt.Printf("| bytes transferred (gzip, headers included, %d requests, the live stream left out) | %.1f KB | %.1f KB | %.1f KB | 150 KB |\n",
		requests, median(totals)/1024, minOf(totals)/1024, maxOf(totals)/1024)
	fmt.Printf("| navigation to the workspace list on screen | %.0f ms | %.0f ms | %.0f ms | 500 ms |\n\n",
		median(times), minOf(times), maxOf(times))
	return nil
}

// responsiveness opens the list of every workspace, changes activity at
// rate per second for secs seconds, and reports the frames and tasks the
// page went through meanwhile.
func responsiveness(p *browsertest.Page, h *browsertest.Hub, backend *fakes.Backend, ids []string, rate, secs int) error {
	if _, err := chromedp.Call(p.Ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: false}); err != nil {
		return err
	}
	if err := p.Do(chromedp.Navigate(h.URL)); err != nil {
		return err
	}
	if err := p.Wait(fmt.Sprintf(`document.querySelectorAll('.ws-row').length === %d && document.querySelectorAll('.badge-running').length === %d && document.querySelector('.live-on')`, len(ids), len(ids)), 60*time.Second); err != nil {
		return err
	}
	if _, err := chromedp.Call(p.Ctx, performance.Enable, performance.EnableParams{}); err != nil {
		return err
	}
	before, err := metrics(p)
	if err != nil {
		return err
	}
	if _, err := browsertest.Eval[bool](p, monitorJS); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	working := map[string]bool{}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	changes := 0
	for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
		<-tick.C
		id := ids[rng.IntN(len(ids))]
		working[id] = !working[id]
		backend.SetActivity(id, working[id], !working[id] && rng.IntN(4) == 0)
		changes++
	}
	tick.Stop()
	// The last changes reach the page; then read what it went through.
	if err := p.Wait(`performance.now() - window.__perf.lastMutation > 300`, 10*time.Second); err != nil {
		return err
	}
	type result struct {
		Frames    []float64 `json:"frames"`
		Long      []float64 `json:"long"`
		Mutations int       `json:"mutations"`
		Seconds   float64   `json:"seconds"`
	}
	r, err := browsertest.Eval[result](p, `(() => { window.__perf.stop = true; const p = window.__perf; return { frames: p.frames, long: p.long, mutations: p.mutations, seconds: (performance.now() - p.start) / 1000 }; })()`)
	if err != nil {
		return err
	}
	after, err := metrics(p)
	if err != nil {
		return err
	}
	sort.Float64s(r.Frames)
	over := func(ms float64) int {
		n := 0
		for _, f := range r.Frames {
			if f > ms {
				n++
			}
		}
		return n
	}
	busy := after["TaskDuration"] - before["TaskDuration"]
	script := after["ScriptDuration"] - before["ScriptDuration"]
	layout := after["LayoutDuration"] + after["RecalcStyleDuration"] - before["LayoutDuration"] - before["RecalcStyleDuration"]
	fmt.Printf("### %d running workspaces, %d activity changes a second for %d s\n\n", len(ids), rate, secs)
	fmt.Printf("| Measure | Value |\n|---|---|\n")
	fmt.Printf("| activity changes sent | %d |\n", changes)
	fmt.Printf("| badge changes drawn (DOM mutations in the list) | %d |\n", r.Mutations)
	fmt.Printf("| frames (requestAnimationFrame) over %.1f s | %d, %.1f a second |\n", r.Seconds, len(r.Frames), float64(len(r.Frames))/r.Seconds)
	fmt.Printf("| frame interval median / 99th percentile / max | %.1f / %.1f / %.1f ms |\n", pct(r.Frames, 50), pct(r.Frames, 99), pct(r.Frames, 100))
	fmt.Printf("| frames later than 25 ms (one or more dropped at 60 Hz) | %d |\n", over(25))
	fmt.Printf("| frames later than 50 ms | %d |\n", over(50))
	fmt.Printf("| long tasks (over 50 ms) | %d |\n", len(r.Long))
	fmt.Printf("| main thread busy (Chromium's TaskDuration) | %.0f ms in %.1f s (%.1f %%) |\n", busy*1000, r.Seconds, 100*busy/r.Seconds)
	fmt.Printf("| of which script / style and layout | %.0f ms / %.0f ms |\n\n", script*1000, layout*1000)
	return nil
}

// monitorJS records every frame interval, every long task and every
// change to the workspace list, from now on.
const monitorJS = `(() => {
  const p = window.__perf = { frames: [], long: [], mutations: 0, start: performance.now(), lastMutation: performance.now(), stop: false };
  let last = performance.now();
  const frame = (t) => { p.frames.push(t - last); last = t; if (!p.stop) requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
  new PerformanceObserver((list) => { for (const e of list.getEntries()) p.long.push(e.duration); }).observe({ type: 'longtask' });
  new MutationObserver((m) => { p.mutations += m.length; p.lastMutation = performance.now(); })
    .observe(document.querySelector('.ws-list'), { subtree: true, childList: true, characterData: true, attributes: true });
  return true;
})()`

func metrics(p *browsertest.Page) (map[string]float64, error) {
	res, err := chromedp.Call(p.Ctx, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for _, x := range res.Metrics {
		m[x.Name] = x.Value
	}
	return m, nil
}

func median(xs []float64) float64 { return pct(xs, 50) }

// pct returns the p-th percentile (nearest rank) of xs.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p/100*float64(len(s)) + 0.5)
	if i < 1 {
		i = 1
	}
	if i > len(s) {
		i = len(s)
	}
	return s[i-1]
}

func minOf(xs []float64) float64 { return pct(xs, 0) }
func maxOf(xs []float64) float64 { return pct(xs, 100) }
