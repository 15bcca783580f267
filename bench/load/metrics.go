package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub/service"
)

// M1 and M2: what the Prometheus metrics (wharf serve --metrics-listen)
// cost. M1 runs W1 (bearer GET /api/hub/state) against two Wharfs built
// alike but for Config.Metrics, in the same rounds: the one with metrics
// counts and times every request and store transaction. M2 scrapes the
// metrics of a Wharf holding 100 registered, running workspaces (their
// sessions fakes.Backend's) and 1,000 open live streams (each with the
// activity topic), as Prometheus would: one GET /metrics read whole.

const (
	m1MinRatio                         = 0.95
	m2Workspaces, m2Streams, m2Scrapes = 100, 1000, 20
	m2MaxScrape                        = 50 * time.Millisecond
	m2Limit                            = 5 * time.Minute
	metricsPath                        = "/metrics"
	metricsOn                          = "metrics on"
	metricsOff                         = "metrics off"
)

// withMetrics turns a Wharf's metrics on.
func withMetrics(c *daemon.Config) { c.Metrics = true }

func runM1(ctx context.Context, e *env) ([]verdict, error) {
	off, err := e.openWharf(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	on, err := e.openWharf(ctx, nil, nil, withMetrics)
	if err != nil {
		return nil, err
	}
	rs, err := e.rounds(ctx, "M1", conns, target{name: metricsOff, addr: off.addr, path: statePath, hdr: bearer(off.session)},
		target{name: metricsOn, addr: on.addr, path: statePath, hdr: bearer(on.session)})
	var vs []verdict
	for c, n := range conns {
		tr := func(x []run) float64 { return ratio(x[1].RPS(), x[0].RPS()) }
		tm := rs.med(c, tr)
		non200, errs, ok := rs.answers(c, 1)
		vs = append(vs, verdict{fmt.Sprintf("M1 throughput with metrics, %d conns", n),
			fmt.Sprintf("%.2f × metrics off (%s); %s vs %s req/s", tm, rs.list(c, func(x []run) string { return fmt.Sprintf("%.2f", tr(x)) }),
				rps(rs.medRun(c, 1, run.RPS)), rps(rs.medRun(c, 0, run.RPS))),
			fmt.Sprintf("≥ %.2f × metrics off; 0 non-200", m1MinRatio), tm >= m1MinRatio && ok && non200 == 0 && errs == 0})
	}
	return vs, err
}

func runM2(ctx context.Context, e *env) ([]verdict, error) {
	w, err := e.openWharf(ctx, func(p *service.Ports) { p.Backend = fakes.NewBackend() }, nil, withMetrics)
	if err != nil {
		return nil, err
	}
	parent, err := mkTemp(e, "wharf-bench-m2-")
	if err != nil {
		return nil, err
	}
	e.progress("M2: registering and starting %d workspaces", m2Workspaces)
	var ids []string
	for i := range m2Workspaces {
		dir := filepath.Join(parent, fmt.Sprintf("ws-%03d", i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, err
		}
		got, err := w.register(ctx, dir)
		if err != nil {
			return nil, err
		}
		if err := w.lifecycle(ctx, got[0], "start"); err != nil {
			return nil, err
		}
		ids = append(ids, got...)
	}
	e.progress("M2: opening %d live streams", m2Streams)
	s, err := openStreams(ctx, m2Streams, func(i int) (*liveConn, error) {
		return dialLive(ctx, w.addr, "/api/hub/live?ws="+ids[i%len(ids)]+"&activity=1", bearer(w.session))
	}, func(int, frame) {}, nil)
	defer s.close()
	if err != nil {
		return nil, err
	}
	addr, err := e.serveMetrics(w.d)
	if err != nil {
		return nil, err
	}
	var took []time.Duration
	var size int
	for i := range m2Scrapes + 1 { // the first one warms the connection up, and is not counted
		t0 := time.Now()
		status, _, body, err := call(ctx, addr, http.MethodGet, metricsPath, nil, nil, nil)
		if err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("scrape: %d %v", status, err)
		}
		if i > 0 {
			took, size = append(took, time.Since(t0)), len(body)
		}
	}
	st, err := w.d.Hub().Stats(ctx)
	if err != nil || st.Live.Streams != m2Streams || st.WorkspaceSessions != m2Workspaces {
		return nil, fmt.Errorf("M2: the Hub holds %d streams and %d running workspaces, want %d and %d (%v)",
			st.Live.Streams, st.WorkspaceSessions, m2Streams, m2Workspaces, err)
	}
	slices.Sort(took)
	// Judged by the median: one scrape is what Prometheus waits for, and
	// the slowest of a few on a shared machine is another process's.
	worst, med := took[len(took)-1], percentile(took, 50)
	return []verdict{{fmt.Sprintf("M2 scrape, %d streams and %d workspaces", m2Streams, m2Workspaces),
		fmt.Sprintf("slowest of %d scrapes %s, median %s; %.1f KB each", m2Scrapes, ms(worst), ms(med), float64(size)/1024),
		fmt.Sprintf("median scrape ≤ %s", ms(m2MaxScrape)), med <= m2MaxScrape}}, nil
}

// serveMetrics serves d's metrics listener on 127.0.0.1:0 until the
// group closes.
func (e *env) serveMetrics(d *daemon.Daemon) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.ServeMetrics(ctx, ln) }()
	e.onClose(func() { cancel(); <-done })
	return ln.Addr().String(), nil
}
