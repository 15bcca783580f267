package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// This file runs the activity fan-out of W3, W4 and W7: n streams with
// activity=1 on one workspace, whose activity the benchmark changes rate
// times a second for a window; every stream must receive every change, in
// order, and each receipt's latency counts from the moment the change was
// published (the fake session's activity frame, or the probe's publish).

// fanoutOpts shapes one fan-out run.
type fanoutOpts struct {
	streams int
	rate    int // activity changes a second
	window  time.Duration
	mem     bool // take memory and goroutine snapshots before and after
	slow    bool // W7: add a slow reader (live_slow.go) besides the streams
}

// fanoutResult is one fan-out run.
type fanoutResult struct {
	Target     string
	Streams    int
	Changes    int           // published
	OpenTook   time.Duration // opening every stream
	Lat        summary       // publish to receipt, every change every stream received
	Received   int           // receipts in order
	Lost       int           // changes a stream never received in order
	Disorder   int           // receipts out of order or repeated
	Signals    int           // resync or unavailable envelopes
	Unexpected int           // envelopes that are none of the above
	Ended      int           // streams that ended before the benchmark closed them
	Complete   int           // streams that received every change in order
	Mem0, Mem1 *memSnap      // before opening, and at the end with every stream open
	HeapPeak   uint64        // the largest live heap sampled during the window
	CPU        time.Duration // process CPU over the window
	Others     float64       // other processes' share of the machine over the window
	Slow       *slowResult
	Err        string
}

// fanStream is one stream of a fan-out and what its reader saw.
type fanStream struct {
	c       *liveConn
	lat     []time.Duration // change k's latency at k-1; -1 until received
	opened  chan struct{}   // closed once the opening summaries are read
	maxSeq  int64           // the highest summary cursor
	next    int64           // the change expected next
	closing atomic.Bool
	done    chan struct{}

	received, lost, disorder, signals, unexpected int
	ended                                         bool
}

// fanShared is what every reader of a run reads.
type fanShared struct {
	ws       []byte
	base     atomic.Int64 // summary cursor before change 1
	tPub     []atomic.Int64
	complete atomic.Int64
}

// read consumes the stream until it ends: summaries first (target's
// count), then changes.
func (f *fanStream) read(sh *fanShared, summaries int) {
	defer close(f.done)
	seen := 0
	if summaries == 0 {
		close(f.opened)
	}
	for {
		fr, err := f.c.next()
		if err != nil {
			f.ended = !f.closing.Load()
			if seen < summaries {
				close(f.opened)
			}
			return
		}
		if fr.Comment != nil {
			continue
		}
		now := sinceEpoch()
		e, ok := parseEnvelope(fr.Data)
		switch {
		case !ok:
			f.unexpected++
		case string(e.Kind) == "resync" || string(e.Kind) == "unavailable":
			f.signals++
		case string(e.Topic) != "activity" || string(e.Kind) != "data":
			f.unexpected++
		case seen < summaries:
			f.maxSeq = max(f.maxSeq, e.Seq)
			if seen++; seen == summaries {
				close(f.opened)
			}
		case string(e.WS) != string(sh.ws):
			f.unexpected++
		default:
			f.change(sh, e.Seq-sh.base.Load(), now)
		}
	}
}

// change records the receipt of change k at now.
func (f *fanStream) change(sh *fanShared, k int64, now time.Duration) {
	switch {
	case k < 1 || k > int64(len(f.lat)):
		f.unexpected++
		return
	case k < f.next:
		f.disorder++
		return
	case k > f.next:
		f.lost += int(k - f.next)
	}
	f.lat[k-1] = now - time.Duration(sh.tPub[k-1].Load())
	f.received++
	f.next = k + 1
	if k == int64(len(f.lat)) && f.received == len(f.lat) {
		sh.complete.Add(1)
	}
}

// runFanout runs one fan-out against t.
func runFanout(ctx context.Context, t liveTarget, o fanoutOpts) *fanoutResult {
	res := &fanoutResult{Target: t.name, Streams: o.streams, Others: math.NaN()}
	m := int(o.window.Seconds() * float64(o.rate))
	interval := time.Second / time.Duration(o.rate)
	sh := &fanShared{ws: []byte(t.ws), tPub: make([]atomic.Int64, m)}
	// Everything the readers record is allocated and touched before the
	// first snapshot, so it does not count as the streams' memory.
	slots := make([]time.Duration, o.streams*m)
	for i := range slots {
		slots[i] = -1
	}
	streams := make([]*fanStream, o.streams)
	for i := range streams {
		streams[i] = &fanStream{lat: slots[i*m : (i+1)*m : (i+1)*m], opened: make(chan struct{}), done: make(chan struct{}), next: 1}
	}
	var slow *slowStream
	defer func() {
		for _, f := range streams {
			if f.c != nil {
				f.closing.Store(true)
				f.c.Close()
				<-f.done
			}
		}
		if slow != nil {
			slow.close()
		}
	}()
	if o.mem {
		s := takeMem()
		res.Mem0 = &s
	}
	if o.slow {
		var err error
		if slow, err = openSlow(ctx, t); err != nil {
			res.Err = "slow stream: " + err.Error()
			return res
		}
	}
	t0 := time.Now()
	path := livePath(t.ws, true, "", "")
	err := openMany(ctx, o.streams, 64, func(i int) error {
		c, err := dialLive(ctx, t.hostPort, path, t.header, nil)
		if err != nil {
			return err
		}
		f := streams[i]
		f.c = c
		go f.read(sh, t.summaries)
		select {
		case <-f.opened:
		case <-time.After(openTimeout):
			return errors.New("no opening summaries")
		}
		select {
		case <-f.done:
			return errors.New("the stream ended while opening")
		default:
			return nil
		}
	})
	res.OpenTook = time.Since(t0)
	if err != nil {
		res.Err = "opening: " + err.Error()
		return res
	}
	var base int64
	for _, f := range streams {
		base = max(base, f.maxSeq)
	}
	sh.base.Store(base)

	// The window: m changes on schedule, the live heap sampled meanwhile.
	stopSample := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				res.HeapPeak = max(res.HeapPeak, liveHeapBytes())
			case <-stopSample:
				return
			}
		}
	})
	var slowWG sync.WaitGroup
	start := time.Now().Add(100 * time.Millisecond)
	if slow != nil {
		slowWG.Go(func() { slow.drive(ctx, t, start, o.window) })
	}
	cpu0 := processCPU()
	busy0, busyOK := machineBusy()
	for k := 1; k <= m; k++ {
		if !waitUntil(ctx, start.Add(time.Duration(k-1)*interval)) {
			break
		}
		sh.tPub[k-1].Store(int64(sinceEpoch()))
		t.activity(k%2 == 1)
		res.Changes = k
	}
	// Grace for the last changes in flight.
	for deadline := time.Now().Add(5 * time.Second); sh.complete.Load() < int64(o.streams) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	elapsed := time.Since(start)
	res.CPU = processCPU() - cpu0
	if busy1, ok := machineBusy(); ok && busyOK {
		res.Others = max(0, float64(busy1-busy0-res.CPU)/(float64(elapsed)*float64(runtime.NumCPU())))
	}
	close(stopSample)
	sampler.Wait()
	slowWG.Wait()
	if o.mem {
		s := takeMem()
		res.Mem1 = &s
	}
	for _, f := range streams {
		f.closing.Store(true)
		f.c.Close()
		<-f.done
	}
	var all []time.Duration
	for _, f := range streams {
		for _, d := range f.lat[:res.Changes] {
			if d >= 0 {
				all = append(all, d)
			}
		}
		res.Received += f.received
		res.Lost += f.lost + (res.Changes - int(f.next-1))
		res.Disorder += f.disorder
		res.Signals += f.signals
		res.Unexpected += f.unexpected
		if f.ended {
			res.Ended++
		}
		if f.received == res.Changes && f.lost == 0 && f.disorder == 0 {
			res.Complete++
		}
		f.c = nil
	}
	res.Lat = summarize(all)
	if slow != nil {
		res.Slow = slow.result(start)
	}
	if res.Changes < m && res.Err == "" {
		res.Err = fmt.Sprintf("stopped after %d of %d changes: %v", res.Changes, m, ctx.Err())
	}
	return res
}

// clientMemory opens n streams on the null server, whose side of a stream
// is a bare socket, and returns the process's growth per stream: the load
// generator's own share of every stream (its reader goroutine and buffers).
func clientMemory(ctx context.Context, n int) (rss, heap, stacks float64, err error) {
	ns, err := startNullServer()
	if err != nil {
		return 0, 0, 0, err
	}
	defer ns.close()
	conns := make([]*liveConn, n)
	var wg sync.WaitGroup
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		wg.Wait()
	}()
	m0 := takeMem()
	err = openMany(ctx, n, 64, func(i int) error {
		c, err := dialLive(ctx, ns.hostPort(), livePath("null", true, "", ""), nil, nil)
		if err != nil {
			return err
		}
		conns[i] = c
		wg.Go(func() {
			for {
				if _, err := c.next(); err != nil {
					return
				}
			}
		})
		return nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	m1 := takeMem()
	return perStream(m0.RSS, m1.RSS, n), perStream(int64(m0.Heap), int64(m1.Heap), n),
		perStream(int64(m0.Stacks), int64(m1.Stacks), n), nil
}
