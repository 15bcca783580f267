package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// target is what one run drives: GET path on a server (or the POSTs post
// builds), with the load generator or wrk; or call, an operation without
// HTTP (W9's raw SQLite write) through the same loop and accounting.
type target struct {
	name string
	srv  *server
	path string
	hdr  http.Header
	post func(w, n int) (path string, body []byte) // worker w sends post(w, 0) and post(w, 1) in turn
	wrk  bool                                      // drive with wrk (GET only)
	call func(ctx context.Context, w, n int) (status int, err error)
	// pace, when set, makes the run open loop: worker w's n-th request is
	// due w × pace / conns + n × pace after the start, and its latency
	// counts from then, so a stall is charged to every request it delays.
	pace time.Duration
}

// requests are the pre-built requests each of conns workers sends in turn.
func (t target) requests(conns int) [][][]byte {
	out := make([][][]byte, conns)
	for w := range out {
		for n := range 1 + b2i(t.post != nil) {
			path, body, b := t.path, []byte(nil), &bytes.Buffer{}
			if t.post != nil {
				path, body = t.post(w, n)
				fmt.Fprintf(b, "POST %s HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, len(body))
			} else {
				fmt.Fprintf(b, "GET %s HTTP/1.1\r\n", path)
			}
			fmt.Fprintf(b, "Host: %s\r\n", t.srv.addr)
			t.hdr.Write(b)
			out[w] = append(out[w], append(append(b.Bytes(), "\r\n"...), body...))
		}
	}
	return out
}

// run is one measured run.
type run struct {
	Name               string
	Conns              int
	Window             time.Duration
	OK, Non200, Errors int // answers to (and errors of) the requests started inside the window
	Accepted           int64
	Lat                summary
	Server, Client     time.Duration // CPU over the window: this process (servers and load generator, wrk's aside), wrk
	Others             float64       // other processes' share of the machine over the window; NaN unknown
	Sent               []int         // requests each worker sent, warm-up included (W9's oracle)
	Err                string
}

// RPS is the answers to the requests started in the window, per second.
func (r run) RPS() float64 { return float64(r.OK+r.Non200) / r.Window.Seconds() }

func (r run) perReq(d time.Duration) time.Duration { return d / time.Duration(max(1, r.OK+r.Non200)) }

// meter is the counters a run's figures are differences of.
type meter struct {
	at        time.Time
	cpu, busy time.Duration
	busyOK    bool
	accepted  int64
}

func mark(s *server) meter {
	m := meter{at: time.Now(), cpu: processCPU()}
	if m.busy, m.busyOK = machineBusy(); s != nil {
		m.accepted = s.accepted.Load()
	}
	return m
}

// fill sets r's CPU, accepted connections and others' share from the
// window m0..m1; reaped is load generator CPU that getrusage counted in
// it as this process's reaped children (wrk's).
func (r *run) fill(m0, m1 meter, client, reaped time.Duration) {
	r.Server, r.Client, r.Accepted = m1.cpu-m0.cpu-reaped, client, m1.accepted-m0.accepted
	if r.Others = math.NaN(); m0.busyOK && m1.busyOK {
		r.Others = max(0, float64(m1.busy-m0.busy-r.Server-client)/(float64(m1.at.Sub(m0.at))*float64(runtime.NumCPU())))
	}
}

// measure makes one run of t at conns connections over window; onStart,
// when set, is called as the window begins (not for wrk).
func (e *env) measure(ctx context.Context, t target, conns int, window time.Duration, onStart func()) run {
	r := run{Name: t.name, Conns: conns, Window: window, Others: math.NaN()}
	if t.wrk {
		if err := runWrk(ctx, e.wrk, t, &r); err != nil {
			r.Err = err.Error()
			e.progress("  %s at %d conns: %v", t.name, conns, err)
		}
		return r
	}
	if t.call == nil {
		var hangUp func()
		t.call, hangUp = t.client(conns)
		defer hangUp()
	}
	from := time.Now().Add(e.cfg.warmup)
	until := from.Add(window)
	m0 := make(chan meter, 1)
	go func() {
		if waitUntil(ctx, from); onStart != nil {
			onStart()
		}
		m0 <- mark(t.srv)
	}()
	lats, non200, errs := make([][]time.Duration, conns), make([]int, conns), make([]int, conns)
	r.Sent = make([]int, conns)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			for n := 0; n < e.cfg.maxPerWorker && errs[w] < maxGenErrors && ctx.Err() == nil; n++ {
				t0 := time.Now()
				if t.pace > 0 {
					t0 = from.Add(-e.cfg.warmup + time.Duration(w)*t.pace/time.Duration(conns) + time.Duration(n)*t.pace)
					waitUntil(ctx, t0)
				}
				if !t0.Before(until) {
					return
				}
				status, err := t.call(ctx, w, n)
				if r.Sent[w]++; !t0.Before(from) {
					if errs[w], non200[w] = errs[w]+b2i(err != nil), non200[w]+b2i(err == nil && status != 200); err == nil {
						lats[w] = append(lats[w], time.Since(t0))
					}
				}
			}
		})
	}
	wg.Wait()
	var all []time.Duration
	for w := range lats {
		all, r.Non200, r.Errors = append(all, lats[w]...), r.Non200+non200[w], r.Errors+errs[w]
	}
	r.Lat, r.OK = summarize(all), len(all)-r.Non200
	r.fill(<-m0, mark(t.srv), 0, 0)
	return r
}

// client is the load generator's side of t: conns raw TCP keep-alive
// connections, each sending its worker's pre-built requests in turn and
// reading each answer's status line and Content-Length bytes of body; a
// broken connection is dialed again.
func (t target) client(conns int) (call func(ctx context.Context, w, n int) (int, error), hangUp func()) {
	reqs, cs, brs := t.requests(conns), make([]net.Conn, conns), make([]*bufio.Reader, conns)
	return func(ctx context.Context, w, n int) (status int, err error) {
			if cs[w] == nil {
				if cs[w], err = net.DialTimeout("tcp", t.srv.addr, 5*time.Second); err != nil {
					return 0, err
				}
				brs[w] = bufio.NewReaderSize(cs[w], 32<<10)
			}
			cs[w].SetDeadline(time.Now().Add(10 * time.Second))
			if _, err = cs[w].Write(reqs[w][n%len(reqs[w])]); err == nil {
				status, err = readAnswer(brs[w])
			}
			if err != nil {
				cs[w].Close()
				cs[w] = nil
			}
			return status, err
		}, func() {
			for _, c := range cs {
				if c != nil {
					c.Close()
				}
			}
		}
}

// maxGenErrors retires a worker whose requests keep failing.
const maxGenErrors = 100

// readAnswer reads one HTTP/1.1 answer and returns its status; the body,
// Content-Length bytes, is discarded. Chunked answers are refused: the
// answers measured all carry a length.
func readAnswer(br *bufio.Reader) (int, error) {
	line, err := br.ReadSlice('\n')
	if err == nil && (len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1."))) {
		err = fmt.Errorf("bad status line %q", line)
	}
	if err != nil {
		return 0, err
	}
	status, err := strconv.Atoi(string(line[9:12]))
	length := -1
	for err == nil {
		if line, err = br.ReadSlice('\n'); err == nil && len(bytes.TrimSpace(line)) == 0 {
			break
		}
		if name, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			length, err = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if err == nil && length < 0 {
		err = errors.New("answer without Content-Length")
	}
	if err == nil {
		_, err = br.Discard(length)
	}
	return status, err
}

// rounds is every run of a set of targets: runs[c][k] is round k at
// concurrency conns[c], one run per target, in order.
type rounds struct {
	conns    []int
	names    []string
	runs     [][][]run
	last     []run // the last attempt's runs, kept or not
	attempts [][]int
	mo       float64 // -max-others
	retries  int
}

// rounds runs ts one after the other at each of conns, -rounds times over.
// A round that other processes disturbed beyond -max-others is run again,
// up to -retries times, and the least disturbed attempt kept.
func (e *env) rounds(ctx context.Context, label string, conns []int, ts ...target) (*rounds, error) {
	rs := &rounds{conns: conns, runs: make([][][]run, len(conns)), attempts: make([][]int, len(conns)), mo: e.cfg.maxOthers, retries: e.cfg.retries}
	for _, t := range ts {
		rs.names = append(rs.names, t.name)
	}
	for k := range e.cfg.rounds {
		for c, n := range conns {
			var best []run
			a := 1
			for ; ctx.Err() == nil; a++ {
				e.progress("%s: round %d/%d at %d conns (attempt %d)", label, k+1, e.cfg.rounds, n, a)
				rs.last = make([]run, len(ts))
				for j, t := range ts {
					rs.last[j] = e.measure(ctx, t, n, e.cfg.duration, nil)
				}
				if best == nil || disturbance(rs.last) < disturbance(best) {
					best = rs.last
				}
				if disturbance(rs.last) <= rs.mo || a > rs.retries {
					break
				}
				e.progress("  other processes took %s of the machine during this round", pct(disturbance(rs.last)))
			}
			rs.runs[c], rs.attempts[c] = append(rs.runs[c], best), append(rs.attempts[c], a)
		}
	}
	return rs, ctx.Err()
}

// disturbance is the largest share of the machine other processes took
// during a run of row (0 when unknown).
func disturbance(row []run) (d float64) {
	for _, r := range row {
		if !math.IsNaN(r.Others) {
			d = max(d, r.Others)
		}
	}
	return d
}

// index is the position of target name, -1 when it did not run.
func (rs *rounds) index(name string) int {
	for j, n := range rs.names {
		if n == name {
			return j
		}
	}
	return -1
}

// clean are the rounds at concurrency c no other process disturbed, all
// of them when every one was.
func (rs *rounds) clean(c int) (out [][]run) {
	for _, row := range rs.runs[c] {
		if disturbance(row) <= rs.mo {
			out = append(out, row)
		}
	}
	if len(out) == 0 {
		return rs.runs[c]
	}
	return out
}

// med is the median of f over the clean rounds at c.
func (rs *rounds) med(c int, f func(row []run) float64) float64 {
	var xs []float64
	for _, row := range rs.clean(c) {
		xs = append(xs, f(row))
	}
	return median(xs)
}

// medRun is the median of f over target j's runs in the clean rounds at c.
func (rs *rounds) medRun(c, j int, f func(run) float64) float64 {
	return rs.med(c, func(x []run) float64 { return f(x[j]) })
}

// list says which rounds a median at c is over, and f of every round,
// disturbed ones starred.
func (rs *rounds) list(c int, f func(row []run) string) string {
	var parts []string
	for _, row := range rs.runs[c] {
		parts = append(parts, f(row)+strings.Repeat("*", b2i(disturbance(row) > rs.mo)))
	}
	basis := fmt.Sprintf("median of %d rounds", len(rs.runs[c]))
	if n := len(rs.clean(c)); n < len(rs.runs[c]) {
		basis = fmt.Sprintf("median of the %d undisturbed round(s)", n)
	}
	return basis + "; rounds: " + strings.Join(parts, ", ")
}

// answers sums target j's non-200 answers and errors over every round at
// c, and says whether it had any 200.
func (rs *rounds) answers(c, j int) (non200, errs int, ok bool) {
	for _, x := range rs.runs[c] {
		non200, errs, ok = non200+x[j].Non200, errs+x[j].Errors+b2i(x[j].Err != ""), ok || x[j].OK > 0
	}
	return non200, errs, ok
}

// everyRun is the table of every run, and what its columns mean.
func (rs *rounds) everyRun() (*table, string) {
	t := newTable("round", "conns", "attempts", "run", "new conns", "requests", "req/s", "p50", "p90", "p99", "p99.9", "max",
		"server CPU/req", "client CPU/req", "other procs")
	client := func(x run) string { // wrk's; the load generator's is counted with the servers'
		if x.Client == 0 {
			return "—"
		}
		return us(x.perReq(x.Client))
	}
	for k := range rs.runs[0] {
		for c, n := range rs.conns {
			for _, x := range rs.runs[c][k] {
				t.add(k+1, n, rs.attempts[c][k], x.Name+errNote(x.Err), x.Accepted, x.OK+x.Non200, rps(x.RPS()), ms(x.Lat.P50), ms(x.Lat.P90),
					ms(x.Lat.P99), ms(x.Lat.P999), ms(x.Lat.Max), us(x.perReq(x.Server)), client(x), pct(x.Others))
			}
		}
	}
	return t, fmt.Sprintf("“new conns”: connections the server accepted in the window (0: keep-alive held; wrk connects in it). "+
		"“other procs”: the share of the machine other processes took during the run; a round with a run above %s was run again, up "+
		"to %d more times, keeping the least disturbed (“attempts”); disturbed rounds are starred in the verdicts. wrk prints no "+
		"p99.9 or max.", pct(rs.mo), rs.retries)
}
