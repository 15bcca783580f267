package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"time"
)

// runWrk drives t with wrk (-t min(conns, CPUs), -c conns, the window in
// whole seconds, no warm-up), the load generator the benchmark's own is
// measured against. wrk is a child of this process: its CPU, counted with
// the reaped children, is taken out of the server's.
func runWrk(ctx context.Context, bin string, t target, r *run) error {
	args := []string{"-t", strconv.Itoa(min(r.Conns, runtime.NumCPU())), "-c", strconv.Itoa(r.Conns), "-d", fmt.Sprintf("%.0fs", math.Ceil(r.Window.Seconds())), "--latency"}
	for k, vs := range t.hdr {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	cmd := exec.CommandContext(ctx, bin, append(args, "http://"+t.srv.addr+t.path)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	m0 := mark(t.srv)
	err := cmd.Run()
	m1 := mark(t.srv)
	if err == nil {
		err = parseWrk(out.String(), r)
	}
	if err != nil {
		return fmt.Errorf("wrk: %w", err)
	}
	client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	r.fill(m0, m1, client, client)
	return nil
}

var wrkFigures = regexp.MustCompile(`(?m)(\d+) requests in|Requests/sec:\s+([\d.]+)|Non-2xx or 3xx responses: (\d+)|` +
	`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)|^\s+(50|90|99)%\s+([\d.]+)(us|ms|s|m)$`)

// parseWrk reads wrk's report (with --latency) into r: the answers, the
// window (answers / rate), errors, p50, p90 and p99.
func parseWrk(s string, r *run) error {
	var requests, non2xx int
	var rate float64
	for _, m := range wrkFigures.FindAllStringSubmatch(s, -1) {
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		switch {
		case m[1] != "":
			requests = n(1)
		case m[2] != "":
			rate, _ = strconv.ParseFloat(m[2], 64)
		case m[3] != "":
			non2xx = n(3)
		case m[4] != "":
			r.Errors = n(4) + n(5) + n(6) + n(7)
		default:
			v, _ := strconv.ParseFloat(m[9], 64)
			d := time.Duration(v * float64(map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute}[m[10]]))
			switch m[8] {
			case "50":
				r.Lat.P50 = d
			case "90":
				r.Lat.P90 = d
			default:
				r.Lat.P99 = d
			}
		}
	}
	if requests == 0 || rate == 0 {
		return fmt.Errorf("no requests in its report: %q", s)
	}
	r.OK, r.Non200, r.Lat.N, r.Window = requests-non2xx, non2xx, requests, time.Duration(float64(requests)/rate*float64(time.Second))
	return nil
}
