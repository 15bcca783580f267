package main

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync/atomic"
	"time"
)

// W12: idle streams cost only their keepalives.
const (
	w12Streams = 1000
	w12MaxCPU  = 0.02 // of one core
	keepEvery  = 15 * time.Second
	// keepSlack is how much shorter than keepEvery an interval may look:
	// the first counts from the client's reading of hello, which may lag
	// the server's writing it (and arming the idle timer) by that much
	// while a thousand streams open.
	keepSlack = 100 * time.Millisecond
)

// w12Result is W12: the process's CPU with no stream, then with
// w12Streams idle ones, each over a window on the real clock.
type w12Result struct {
	Streams            int
	IdleWindow, Window time.Duration
	IdleCPU, CPU       time.Duration
	IdleOthers, Others float64
	Expected           int     // keepalives each stream is owed within the window
	Exact              int     // streams that got exactly that many
	Keepalives         int     // in the window, all streams
	Intervals          summary // hello to the first keepalive, and between keepalives
	IntervalMin        time.Duration
	Envelopes          int // anything else the streams read
	Ended              int
	Err                string
}

// Share is the streams' CPU as a share of one core: the window's rate
// less the idle rate.
func (r *w12Result) Share() float64 {
	if r.Window <= 0 || r.IdleWindow <= 0 {
		return math.NaN()
	}
	return r.CPU.Seconds()/r.Window.Seconds() - r.IdleCPU.Seconds()/r.IdleWindow.Seconds()
}

type w12Stream struct {
	c       *liveConn
	hello   time.Duration   // sinceEpoch
	keeps   []time.Duration // sinceEpoch of each keepalive
	other   int
	closing atomic.Bool
	ended   bool
	done    chan struct{}
}

func (s *w12Stream) read() {
	defer close(s.done)
	for {
		fr, err := s.c.next()
		if err != nil {
			s.ended = !s.closing.Load()
			return
		}
		if string(fr.Comment) == "keepalive" && len(s.keeps) < cap(s.keeps) {
			s.keeps = append(s.keeps, sinceEpoch())
		} else {
			s.other++
		}
	}
}

// runW12 measures the process's CPU over idle with no stream, then opens
// w12Streams streams on t (no subscription, no activity) and measures it
// again over idle+1 s starting 1 s after the last opened, a window in
// which every stream is owed exactly idle/15 s keepalives (rounded down)
// when the opening took less than 14 s.
func runW12(ctx context.Context, t liveTarget, idle time.Duration, progress func(string, ...any)) *w12Result {
	res := &w12Result{Streams: w12Streams, IdleOthers: math.NaN(), Others: math.NaN()}
	measure := func(d time.Duration) (time.Duration, float64, bool) {
		cpu0 := processCPU()
		busy0, busyOK := machineBusy()
		t0 := time.Now()
		ok := waitUntil(ctx, t0.Add(d))
		cpu := processCPU() - cpu0
		others := math.NaN()
		if busy1, ok1 := machineBusy(); ok1 && busyOK {
			others = max(0, float64(busy1-busy0-cpu)/(float64(time.Since(t0))*float64(runtime.NumCPU())))
		}
		return cpu, others, ok
	}
	progress("W12: %s of idleness with no stream", idle)
	res.IdleWindow = idle
	var ok bool
	if res.IdleCPU, res.IdleOthers, ok = measure(idle); !ok {
		res.Err = "interrupted"
		return res
	}
	streams := make([]*w12Stream, w12Streams)
	for i := range streams {
		streams[i] = &w12Stream{keeps: make([]time.Duration, 0, 8), done: make(chan struct{})}
	}
	defer func() {
		for _, s := range streams {
			if s.c != nil {
				s.closing.Store(true)
				s.c.Close()
				<-s.done
			}
		}
	}()
	progress("W12: %d idle streams for %s", w12Streams, idle+time.Second)
	path := livePath(t.ws, false, "", "")
	if err := openMany(ctx, w12Streams, 64, func(i int) error {
		c, err := dialLive(ctx, t.hostPort, path, t.header, nil)
		if err != nil {
			return err
		}
		s := streams[i]
		s.c, s.hello = c, sinceEpoch()
		go s.read()
		return nil
	}); err != nil {
		res.Err = "opening: " + err.Error()
		return res
	}
	if !waitUntil(ctx, time.Now().Add(time.Second)) {
		res.Err = "interrupted"
		return res
	}
	from := sinceEpoch()
	res.Window = idle + time.Second
	if res.CPU, res.Others, ok = measure(res.Window); !ok {
		res.Err = "interrupted"
		return res
	}
	until := sinceEpoch()
	res.Expected = int(idle / keepEvery)
	var gaps []time.Duration
	for _, s := range streams {
		s.closing.Store(true)
		s.c.Close()
		<-s.done
		s.c = nil
		n := 0
		prev := s.hello
		for _, k := range s.keeps {
			gaps = append(gaps, k-prev)
			prev = k
			if k >= from && k <= until {
				n++
			}
		}
		res.Keepalives += n
		if n == res.Expected {
			res.Exact++
		}
		res.Envelopes += s.other
		if s.ended {
			res.Ended++
		}
	}
	res.Intervals = summarize(gaps)
	if len(gaps) > 0 {
		res.IntervalMin = gaps[0]
	}
	if res.Exact < res.Streams && res.Err == "" && idle/keepEvery < 1 {
		res.Err = "the window is shorter than one keepalive interval"
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.Err = "deadline"
	}
	return res
}
