package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is W7's slow reader: one stream, among the fan-out's, that
// reads 1 KB/s. To make it fall behind by more than the Hub's backlog
// bound within the window, it also follows workspace B's inventory, whose
// ticks (slowTickBytes each, slowTickRate a second) no other stream
// follows.

const (
	slowReadRate  = 1024     // bytes a second
	slowTickBytes = 64 << 10 // padding of each of B's inventory ticks
	slowTickRate  = 10       // a second
	// slowAfterLimit bounds the wait, after the window, for the slow
	// stream's handler to return (its write deadline is 30 s).
	slowAfterLimit = 35 * time.Second
)

type slowStream struct {
	c       *liveConn
	th      *throttled
	done    chan struct{}
	closing atomic.Bool
	sawEnd  bool // the client read the stream's end
	tap     *liveTap

	mu       sync.Mutex
	hubEnded time.Duration // sinceEpoch of the first 404 to the probing POST; 0 before
	polls    map[string]int
	ticks    int
}

// slowResult is what happened to the slow stream.
type slowResult struct {
	Ticks, TickBytes int
	BytesRead        int64
	HubEnded         time.Duration // from the window's start until the Hub refused its id (404); -1 never
	HandlerEnded     time.Duration // until its handler returned; -1 not before the benchmark closed it
	Polls            string        // the answers to the probing POSTs
	SawEnd           bool
}

func openSlow(ctx context.Context, t liveTarget) (*slowStream, error) {
	if t.lw == nil {
		return nil, fmt.Errorf("the slow reader runs against Wharf only")
	}
	s := &slowStream{th: &throttled{rate: slowReadRate}, done: make(chan struct{}), tap: t.tap, polls: map[string]int{}}
	path := livePath(t.lw.b, true, `[{"topic":"inventory"}]`, "&bench=slow")
	c, err := dialLive(ctx, t.hostPort, path, t.header, func(nc net.Conn) net.Conn { s.th.Conn = nc; return s.th })
	if err != nil {
		return nil, err
	}
	s.c = c
	go func() {
		defer close(s.done)
		for {
			if _, err := c.next(); err != nil {
				s.sawEnd = !s.closing.Load()
				return
			}
		}
	}()
	return s, nil
}

// drive sends B's heavy ticks and probes the stream's id once a second for
// the window, then waits (at most slowAfterLimit) for its handler to
// return once the Hub has ended it.
func (s *slowStream) drive(ctx context.Context, t liveTarget, start time.Time, window time.Duration) {
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := int64(1); n <= int64(window.Seconds()*slowTickRate); n++ {
			if !waitUntil(ctx, start.Add(time.Duration(n-1)*time.Second/slowTickRate)) {
				return
			}
			if t.tick(t.lw.b, inventoryTick(n, slowTickBytes)) {
				s.mu.Lock()
				s.ticks++
				s.mu.Unlock()
			}
		}
	})
	client := newClient()
	client.Timeout = 500 * time.Millisecond
	client.Transport.(*http.Transport).MaxConnsPerHost = 0 // a probe stuck behind the stream's write must not hold the next
	defer client.CloseIdleConnections()
	url := "http://" + t.hostPort + "/api/hub/live/" + s.c.ID + "/subscriptions"
	for at := start; at.Before(start.Add(window)); at = at.Add(time.Second) {
		if !waitUntil(ctx, at) {
			break
		}
		go s.poll(ctx, client, url, t.header)
	}
	wg.Wait()
	deadline := time.Now().Add(slowAfterLimit)
	for s.tap.slowEnded.Load() == 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		s.mu.Lock()
		ended := s.hubEnded
		s.mu.Unlock()
		if ended == 0 {
			return // the Hub kept it: nothing to wait for
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// poll asks to change nothing on the stream: 200 while it lives, 404 once
// the Hub ended it, and no answer within the timeout while a write to it
// is stuck (a change waits for the batch being written).
func (s *slowStream) poll(ctx context.Context, client *http.Client, url string, header http.Header) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(`{}`)))
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	at := sinceEpoch()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil && strings.Contains(err.Error(), "Timeout"):
		s.polls["no answer in 500 ms"]++
	case err != nil:
		s.polls["error"]++
	default:
		resp.Body.Close()
		s.polls[fmt.Sprint(resp.StatusCode)]++
		if resp.StatusCode == http.StatusNotFound && s.hubEnded == 0 {
			s.hubEnded = at
		}
	}
}

func (s *slowStream) close() {
	if s.c != nil {
		s.closing.Store(true)
		s.c.Close()
		<-s.done
		s.c = nil
	}
}

func (s *slowStream) result(start time.Time) *slowResult {
	handlerEnded := s.tap.slowEnded.Load()
	s.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	origin := start.Sub(benchEpoch)
	r := &slowResult{Ticks: s.ticks, TickBytes: len(inventoryTick(1, slowTickBytes)), BytesRead: s.th.total.Load(),
		HubEnded: -1, HandlerEnded: -1, SawEnd: s.sawEnd}
	if s.hubEnded != 0 {
		r.HubEnded = s.hubEnded - origin
	}
	if handlerEnded != 0 {
		r.HandlerEnded = time.Duration(handlerEnded) - origin
	}
	var parts []string
	for k, n := range s.polls {
		parts = append(parts, fmt.Sprintf("%d × %s", n, k))
	}
	slices.Sort(parts)
	r.Polls = strings.Join(parts, ", ")
	return r
}
