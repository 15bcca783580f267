package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// W6: every stream dropped at once and reconnected with its cursor.
const (
	w6Streams  = 1000
	w6Spread   = 2 * time.Second // the reconnects are spread over it
	w6TickRate = 10              // inventory ticks a second, throughout
	w6MaxHello = 5 * time.Second
	w6Settle   = 10 * time.Second
	w6Live     = 2 * time.Second // streams stay after their reconnect
)

// w6Result is one W6 run.
type w6Result struct {
	Target       string
	Streams      int
	Reconnected  int
	Open, Hello  summary       // reconnect dial to `: open`, to hello
	HelloMax     time.Duration // from the drop to the last hello
	Replayed     int           // joins that got the latest tick, then ready
	AtHead       int           // joins whose cursor was the head: ready only
	BadOrder     int           // streams with a live tick before ready, or cursors going back
	Signals      int           // unavailable or resync envelopes
	NoReady      int           // reconnected streams that never got ready
	LiveAfter    int           // streams that got a live tick after their ready
	G0, GOpen    int           // the servers' goroutines before any stream, and with the reconnected ones open
	GLast        int           // the last count taken after they closed
	Settled      time.Duration // from the close until back to G0; -1 not within w6Settle
	ReconnectAll time.Duration // from the drop until every reconnect had its hello (or failed)
	Err          string
	dropAt       time.Time
}

// w6Stream is one connection of a W6 stream and what its reader saw.
type w6Stream struct {
	c         *liveConn
	old       string // the cursor it reconnected with
	cursor    string // the last inventory cursor read
	joined    bool   // ready read
	replayed  bool   // a tick read before ready
	bad       bool
	signals   int
	live      int
	lastEpoch []byte
	lastSeq   int64
	ready     chan struct{}
	closing   atomic.Bool
	done      chan struct{}
}

func newW6Stream(old string) *w6Stream {
	return &w6Stream{old: old, ready: make(chan struct{}), done: make(chan struct{})}
}

// read follows the inventory subscription: at most one tick (the replay)
// before ready, then ticks whose cursors only go forward.
func (s *w6Stream) read() {
	defer close(s.done)
	oldEpoch, oldSeq := splitCursor(s.old)
	for {
		fr, err := s.c.next()
		if err != nil {
			return
		}
		e, ok := parseEnvelope(fr.Data)
		if fr.Comment != nil || !ok || string(e.Topic) != "inventory" {
			continue
		}
		s.cursor = string(e.Cursor)
		switch string(e.Kind) {
		case "ready":
			if !s.joined {
				s.joined = true
				close(s.ready)
			}
		case "data":
			switch {
			case !s.joined && s.replayed:
				s.bad = true // a second tick before ready: live before the replay ended
			case !s.joined:
				s.replayed = true
				if bytes.Equal(e.Epoch, oldEpoch) && e.Seq <= oldSeq {
					s.bad = true // the replay is not newer than what the client held
				}
			default:
				s.live++
				if bytes.Equal(e.Epoch, s.lastEpoch) && e.Seq <= s.lastSeq {
					s.bad = true
				}
			}
			s.lastEpoch, s.lastSeq = append(s.lastEpoch[:0], e.Epoch...), e.Seq
		default:
			s.signals++
		}
	}
}

func splitCursor(c string) ([]byte, int64) {
	i := bytes.LastIndexByte([]byte(c), '.')
	if i < 0 {
		return nil, -1
	}
	n, err := strconv.ParseInt(c[i+1:], 10, 64)
	if err != nil {
		return nil, -1
	}
	return []byte(c[:i]), n
}

func (s *w6Stream) close() {
	if s.c != nil {
		s.closing.Store(true)
		s.c.Close()
		<-s.done
		s.c = nil
	}
}

// runW6 opens w6Streams streams subscribed to t.ws's inventory while ticks
// flow, drops them all at once, reconnects each with its cursor within
// w6Spread, keeps them w6Live, closes them and waits for the servers'
// goroutines to come back to their count before the first stream.
func runW6(ctx context.Context, t liveTarget) *w6Result {
	res := &w6Result{Target: t.name, Streams: w6Streams, Settled: -1}
	res.G0, _, _ = goroutineCounts()
	first := make([]*w6Stream, w6Streams)
	second := make([]*w6Stream, w6Streams)
	defer func() {
		for _, s := range append(first, second...) {
			if s != nil {
				s.close()
			}
		}
	}()
	tctx, stopTicks := context.WithCancel(ctx)
	var ticks sync.WaitGroup
	ticks.Go(func() {
		start := time.Now()
		for n := int64(1); ; n++ {
			if !waitUntil(tctx, start.Add(time.Duration(n-1)*time.Second/w6TickRate)) {
				return
			}
			t.tick(t.ws, inventoryTick(n, 0))
		}
	})
	defer func() { stopTicks(); ticks.Wait() }()

	join := func(i int, list []*w6Stream, cursor, extra string) error {
		subs := `[{"topic":"inventory"}]`
		if cursor != "" {
			subs = `[{"topic":"inventory","cursor":` + strconv.Quote(cursor) + `}]`
		}
		c, err := dialLive(ctx, t.hostPort, livePath(t.ws, false, subs, extra), t.header, nil)
		if err != nil {
			return err
		}
		s := newW6Stream(cursor)
		s.c = c
		list[i] = s
		go s.read()
		return nil
	}
	waitReady := func(s *w6Stream, limit time.Duration) bool {
		select {
		case <-s.ready:
			return true
		case <-s.done:
			return false
		case <-time.After(limit):
			return false
		}
	}
	err := openMany(ctx, w6Streams, 64, func(i int) error {
		if err := join(i, first, "", ""); err != nil {
			return err
		}
		if !waitReady(first[i], openTimeout) {
			return errors.New("no inventory ready")
		}
		return nil
	})
	if err != nil {
		res.Err = "opening: " + err.Error()
		return res
	}
	time.Sleep(time.Second) // live ticks move every cursor on

	// The drop, then every stream back within w6Spread with its cursor.
	res.dropAt = time.Now()
	for _, s := range first {
		s.close()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var opens, hellos []time.Duration
	var failed []error
	for i, s := range first {
		at := res.dropAt.Add(time.Duration(i) * w6Spread / w6Streams)
		wg.Go(func() {
			if !waitUntil(ctx, at) {
				return
			}
			err := join(i, second, s.cursor, "&reconnect=1")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, err)
				return
			}
			c := second[i].c
			opens, hellos = append(opens, c.Open), append(hellos, c.Helo)
			res.HelloMax = max(res.HelloMax, time.Since(res.dropAt))
		})
	}
	wg.Wait()
	res.ReconnectAll = time.Since(res.dropAt)
	res.Reconnected = len(hellos)
	res.Open, res.Hello = summarize(opens), summarize(hellos)
	if len(failed) > 0 {
		res.Err = strconv.Itoa(len(failed)) + " reconnect(s) failed, the first: " + failed[0].Error()
	}
	for _, s := range second {
		if s != nil {
			waitReady(s, w6MaxHello)
		}
	}
	time.Sleep(w6Live)
	res.GOpen, _, _ = goroutineCounts()
	stopTicks()
	ticks.Wait()
	for _, s := range second {
		if s == nil {
			continue
		}
		s.close()
		switch {
		case !s.joined:
			res.NoReady++
		case s.replayed:
			res.Replayed++
		default:
			res.AtHead++
		}
		if s.bad {
			res.BadOrder++
		}
		if s.live > 0 {
			res.LiveAfter++
		}
		res.Signals += s.signals
	}
	closed := time.Now()
	for {
		res.GLast, _, _ = goroutineCounts()
		if res.GLast <= res.G0 {
			res.Settled = time.Since(closed)
			break
		}
		if time.Since(closed) > w6Settle || !waitUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			break
		}
	}
	return res
}
