package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// liveCoreDiag is W3 without HTTP, TCP or client: the same streams opened
// with hub.OpenLive, each drained by a goroutine calling LiveStream.Next
// with a write that only notes the time. It shows what the Hub's broker
// and streams cost apart from the HTTP adapter and the sockets.
type liveCoreDiag struct {
	Streams, Changes int
	Received, Lost   int
	Lat              summary
	CPU              time.Duration
	Err              string
}

// diagnoseLiveCore runs the core-only fan-out on lw's Hub.
func diagnoseLiveCore(ctx context.Context, lw *liveWharf, n, rate int, window time.Duration) *liveCoreDiag {
	res := &liveCoreDiag{Streams: n}
	sess, err := lw.hub.Authenticate(ctx, lw.session)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	m := int(window.Seconds() * float64(rate))
	tPub := make([]atomic.Int64, m)
	var base atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type drained struct {
		lat            []time.Duration
		maxSeq         int64
		opened         chan struct{}
		received, lost int
	}
	outs := make([]*drained, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	summaries := len(lw.fl.ids)
	for i := range n {
		s, err := lw.hub.OpenLive(ctx, sess, lw.a, true, nil)
		if err != nil {
			res.Err = err.Error()
			return res
		}
		d := &drained{lat: make([]time.Duration, 0, m), opened: make(chan struct{})}
		outs[i] = d
		wg.Go(func() {
			defer s.Close()
			seen, next := 0, int64(1)
			for {
				err := s.Next(ctx, func(envs []hub.Envelope, _ bool) error {
					now := sinceEpoch()
					for _, e := range envs {
						if e.Topic != hub.TopicActivity || e.Kind != hub.EventData {
							continue
						}
						seq := cursorSeq(e.Cursor)
						if seen < summaries {
							d.maxSeq = max(d.maxSeq, seq)
							if seen++; seen == summaries {
								close(d.opened)
							}
							continue
						}
						k := seq - base.Load()
						if e.WS != lw.a || k < next || k > int64(m) {
							continue
						}
						d.lost += int(k - next)
						d.lat = append(d.lat, now-time.Duration(tPub[k-1].Load()))
						d.received++
						next = k + 1
					}
					return nil
				})
				if err != nil {
					return
				}
			}
		})
		select {
		case <-d.opened:
		case <-time.After(openTimeout):
			res.Err = "no opening summaries"
			return res
		}
	}
	var b int64
	for _, d := range outs {
		b = max(b, d.maxSeq)
	}
	base.Store(b)
	interval := time.Second / time.Duration(rate)
	start := time.Now().Add(100 * time.Millisecond)
	cpu0 := processCPU()
	for k := 1; k <= m; k++ {
		if !waitUntil(ctx, start.Add(time.Duration(k-1)*interval)) {
			res.Err = "interrupted"
			break
		}
		tPub[k-1].Store(int64(sinceEpoch()))
		lw.backend.SetActivity(lw.a, k%2 == 1, false)
		res.Changes = k
	}
	waitUntil(ctx, time.Now().Add(time.Second))
	res.CPU = processCPU() - cpu0
	cancel()
	wg.Wait()
	var all []time.Duration
	for _, d := range outs {
		all = append(all, d.lat...)
		res.Received += d.received
		res.Lost += res.Changes - d.received
	}
	res.Lat = summarize(all)
	if res.Received == 0 && res.Err == "" {
		res.Err = "no change received"
	}
	return res
}

// cursorSeq is the number after a cursor's last '.', or -1.
func cursorSeq(c string) int64 {
	i := strings.LastIndexByte(c, '.')
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(c[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// cpuPerEnvelope is the process CPU per envelope the streams took.
func (d *liveCoreDiag) cpuPerEnvelope() time.Duration {
	if d.Received == 0 {
		return 0
	}
	return d.CPU / time.Duration(d.Received)
}
