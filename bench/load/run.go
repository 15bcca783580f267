package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"runtime"
	"sync"
	"time"
)

// target is one HTTP endpoint driven by the closed-loop runner.
type target struct {
	url    string
	header http.Header
	// request, when set, builds worker w's n-th request (n counts from 0,
	// warm-up included) instead of re-sending one GET of url: W9 gives each
	// worker its own workspace and alternates the name it sends. The
	// request's header is used as returned, so it may be shared between one
	// worker's requests but not between workers.
	request func(ctx context.Context, w, n int) (*http.Request, error)
	// call, when set, replaces the HTTP exchange altogether: worker w's
	// n-th operation, answering a status as if it were one. It lets an
	// in-process baseline (W9's raw SQLite writes) go through the very
	// loop, window and accounting the HTTP runs use.
	call func(ctx context.Context, w, n int) (status int, err error)
	// pace, when positive, makes the run open-loop: worker w sends its n-th
	// request at n × pace after the run's start (the workers staggered
	// evenly within one pace), on time or as soon as its previous answer
	// is in when late, and its latency counts from that intended start, so
	// a stall is charged to every request it delayed.
	pace time.Duration
}

// runResult is one closed-loop run at a fixed concurrency.
type runResult struct {
	Conns    int
	Duration time.Duration // measured window
	OK       int           // 200 answers started inside the window
	Non200   int           // other statuses started inside the window
	Errors   int           // transport errors started inside the window
	Accepted int64         // connections the server accepted during the run
	CPU      time.Duration // process CPU time (client and server) during the window
	// Others is the share of the machine's CPU (all cores) that other
	// processes used during the window, or NaN when unknown: a high value
	// marks a run disturbed by something outside this benchmark.
	Others float64
	Lat    summary // latency of every request started inside the window
}

// RPS is the run's throughput: answers started in the window per second.
func (r runResult) RPS() float64 {
	return float64(r.OK+r.Non200) / r.Duration.Seconds()
}

// CPUPerRequest is the process CPU time per answered request.
func (r runResult) CPUPerRequest() time.Duration {
	n := r.OK + r.Non200
	if n == 0 || r.CPU <= 0 {
		return 0
	}
	return r.CPU / time.Duration(n)
}

// newClient returns a client that holds at most one keep-alive connection,
// so a worker is exactly one connection.
func newClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			Proxy:               nil, // loopback only, never through a proxy from the environment
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        1,
			MaxIdleConnsPerHost: 1,
			MaxConnsPerHost:     1,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		},
		Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// maxErrorsPerWorker ends a worker whose requests keep failing, so a dead
// server does not turn the run into a busy loop.
const maxErrorsPerWorker = 100

// closedLoop drives t with conns workers, each on its own keep-alive
// connection sending its next request as soon as the previous answer is
// read. Requests started during the first warmup are discarded; those
// started during the following measure window are recorded. Every worker
// stops at the end of the window, after maxPerWorker requests, or after
// maxErrorsPerWorker transport errors, whichever comes first. started, if
// not nil, is closed when the measured window begins.
func closedLoop(ctx context.Context, t target, conns int, warmup, measure time.Duration, maxPerWorker int, accepts *counter, started chan<- struct{}) runResult {
	type workerOut struct {
		lat                []time.Duration
		ok, non200, errors int
	}
	outs := make([]workerOut, conns)
	begin := time.Now()
	from := begin.Add(warmup)
	until := from.Add(measure)
	ctx, cancel := context.WithDeadline(ctx, until.Add(10*time.Second))
	defer cancel()

	var acceptedBefore int64
	var cpuBefore, busyBefore time.Duration
	var busyOK bool
	markerDone := make(chan struct{})
	go func() { // takes the counters at the start of the window
		defer close(markerDone)
		timer := time.NewTimer(time.Until(from))
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		acceptedBefore = accepts.load()
		cpuBefore = processCPU()
		busyBefore, busyOK = machineBusy()
		if started != nil {
			close(started)
		}
	}()

	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			out := &outs[i]
			out.lat = make([]time.Duration, 0, 1<<14)
			client := newClient()
			defer client.CloseIdleConnections()
			var req *http.Request
			if t.request == nil && t.call == nil {
				var err error
				if req, err = http.NewRequestWithContext(ctx, http.MethodGet, t.url, nil); err != nil {
					out.errors = maxErrorsPerWorker
					return
				}
				req.Header = t.header.Clone()
			}
			for n := 0; n < maxPerWorker && out.errors < maxErrorsPerWorker; n++ {
				t0 := time.Now()
				if t.pace > 0 {
					sched := begin.Add(time.Duration(i)*t.pace/time.Duration(conns) + time.Duration(n)*t.pace)
					if !sched.Before(until) || !waitUntil(ctx, sched) {
						break
					}
					t0 = sched
				}
				if !t0.Before(until) {
					break
				}
				// A built request is always sent, so a builder may count
				// what it built as sent.
				if t.request != nil {
					var err error
					if req, err = t.request(ctx, i, n); err != nil {
						out.errors = maxErrorsPerWorker
						return
					}
				}
				var status int
				var err error
				if t.call != nil {
					status, err = t.call(ctx, i, n)
				} else {
					// A request may be sent again once the previous response's
					// body is closed; reusing it keeps the client's own cost low.
					var resp *http.Response
					if resp, err = client.Do(req); err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						status = resp.StatusCode
					}
				}
				t1 := time.Now()
				if t0.Before(from) {
					continue
				}
				switch {
				case err != nil:
					out.errors++
				case status == http.StatusOK:
					out.ok++
					out.lat = append(out.lat, t1.Sub(t0))
				default:
					out.non200++
					out.lat = append(out.lat, t1.Sub(t0))
				}
			}
		})
	}
	wg.Wait()
	<-markerDone
	cpu := processCPU() - cpuBefore
	busyAfter, ok := machineBusy()
	elapsed := time.Since(from)
	res := runResult{Conns: conns, Duration: measure, Accepted: accepts.load() - acceptedBefore, CPU: cpu, Others: math.NaN()}
	if ok && busyOK && elapsed > 0 {
		res.Others = max(0, float64(busyAfter-busyBefore-cpu)/(float64(elapsed)*float64(runtime.NumCPU())))
	}
	var all []time.Duration
	for _, o := range outs {
		res.OK += o.ok
		res.Non200 += o.non200
		res.Errors += o.errors
		all = append(all, o.lat...)
	}
	res.Lat = summarize(all)
	return res
}

// waitUntil waits for the wall clock to reach at, and reports false when
// ctx ended first.
func waitUntil(ctx context.Context, at time.Time) bool {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// loginAttempt is the outcome of one login request.
type loginAttempt struct {
	status       int
	cacheControl string
	latency      time.Duration
	err          error
}

// attackResult summarizes a login-abuse run.
type attackResult struct {
	Attempts       int
	Over           time.Duration
	ByStatus       map[int]int
	Errors         int
	NoStore429     int // 429 answers carrying Cache-Control: no-store
	Lat401, Lat429 summary
	Verifications  uint64 // password verifications the attack caused
	Elapsed        time.Duration
}

// loginAbuse sends attempts wrong-password logins for name to loginURL from
// one client, one every over/attempts (open loop: an attempt is sent on
// schedule even while earlier ones are still being answered). verified
// reads the Hub's password-verification counter.
func loginAbuse(ctx context.Context, loginURL, name string, attempts int, over time.Duration, verified func() uint64) attackResult {
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, DisableCompression: true},
		Timeout:   30 * time.Second,
	}
	defer client.CloseIdleConnections()
	body := []byte(`{"name":"` + name + `","password":"not the password","deviceLabel":"bench attacker"}`)
	results := make([]loginAttempt, attempts)
	interval := over / time.Duration(attempts)
	v0 := verified()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range attempts {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
			}
		}
		wg.Go(func() {
			r := &results[i]
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, loginURL, bytes.NewReader(body))
			if err != nil {
				r.err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			t0 := time.Now()
			resp, err := client.Do(req)
			if err != nil {
				r.err = err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			r.latency = time.Since(t0)
			r.status = resp.StatusCode
			r.cacheControl = resp.Header.Get("Cache-Control")
		})
	}
	wg.Wait()
	res := attackResult{Attempts: attempts, Over: over, ByStatus: map[int]int{}, Elapsed: time.Since(start)}
	res.Verifications = verified() - v0
	var l401, l429 []time.Duration
	for _, r := range results {
		if r.err != nil {
			res.Errors++
			continue
		}
		res.ByStatus[r.status]++
		switch r.status {
		case http.StatusUnauthorized:
			l401 = append(l401, r.latency)
		case http.StatusTooManyRequests:
			l429 = append(l429, r.latency)
			if r.cacheControl == "no-store" {
				res.NoStore429++
			}
		}
	}
	res.Lat401, res.Lat429 = summarize(l401), summarize(l429)
	return res
}
