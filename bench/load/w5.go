package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// W5: streams changing their subscriptions while events flow.
const (
	w5Streams  = 200
	w5Changes  = 5  // subscription changes per stream a second
	w5TickRate = 50 // inventory ticks a second
	w5Warmup   = time.Second
	w5Window   = 10 * time.Second
	w5MaxP99   = 20 * time.Millisecond
)

// w5Result is one W5 run.
type w5Result struct {
	Target         string
	Streams        int
	Posts          int // answered inside the window
	Non200, Errors int
	Lat            summary // scheduled send to answer read
	Ticks          int64
	InvReceived    int   // inventory data envelopes the streams read
	ServerLate     int64 // inventory writes after a removal answered, before the next addition (tap)
	ClientLate     int   // ticks published after a removal answered, read before the next addition
	Ended          int
	CPU            time.Duration
	Others         float64
	Err            string
}

type w5Stream struct {
	c            *liveConn
	removedAfter atomic.Int64 // ticks published when the last removal answered; -1 while subscribed
	cursor       atomic.Pointer[string]
	ready        chan struct{} // closed at the first inventory ready
	readyOnce    sync.Once
	closing      atomic.Bool
	done         chan struct{}
	late, inv    int
	ended        bool
}

func (s *w5Stream) read() {
	defer close(s.done)
	for {
		fr, err := s.c.next()
		if err != nil {
			s.ended = !s.closing.Load()
			return
		}
		e, ok := parseEnvelope(fr.Data)
		if fr.Comment != nil || !ok || string(e.Topic) != "inventory" {
			continue
		}
		cur := string(e.Cursor)
		s.cursor.Store(&cur)
		switch string(e.Kind) {
		case "ready":
			s.readyOnce.Do(func() { close(s.ready) })
		case "data":
			s.inv++
			if ra := s.removedAfter.Load(); ra >= 0 && jsonInt(e.Data, "benchSeq") > ra {
				s.late++
			}
		}
	}
}

// w5Remove is the body removing the inventory subscription.
var w5Remove = []byte(`{"remove":[{"topic":"inventory"}]}`)

// w5Add is the body adding it back from cursor.
func w5Add(cursor string) []byte {
	b := strconv.AppendQuote([]byte(`{"add":[{"topic":"inventory","cursor":`), cursor)
	return append(b, "}]}"...)
}

// runW5 opens w5Streams streams subscribed to the inventory of t.ws, sends
// w5TickRate ticks a second, and has every stream remove and add the
// subscription in turn, w5Changes times a second, each POST sent on
// schedule (open loop; latency from the scheduled time).
func runW5(ctx context.Context, t liveTarget) *w5Result {
	res := &w5Result{Target: t.name, Streams: w5Streams, Others: math.NaN()}
	streams := make([]*w5Stream, w5Streams)
	defer func() {
		for _, s := range streams {
			if s != nil && s.c != nil {
				s.closing.Store(true)
				s.c.Close()
				<-s.done
			}
		}
	}()
	path := livePath(t.ws, false, `[{"topic":"inventory"}]`, "")
	err := openMany(ctx, w5Streams, 32, func(i int) error {
		c, err := dialLive(ctx, t.hostPort, path, t.header, nil)
		if err != nil {
			return err
		}
		s := &w5Stream{c: c, ready: make(chan struct{}), done: make(chan struct{})}
		s.removedAfter.Store(-1)
		streams[i] = s
		go s.read()
		select {
		case <-s.ready:
			return nil
		case <-s.done:
			return errors.New("the stream ended before its subscription was ready")
		case <-time.After(openTimeout):
			return errors.New("no inventory ready")
		}
	})
	if err != nil {
		res.Err = "opening: " + err.Error()
		return res
	}
	late0 := t.tap.violations.Load()
	var published atomic.Int64
	start := time.Now().Add(100 * time.Millisecond)
	from, until := start.Add(w5Warmup), start.Add(w5Warmup+w5Window)
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := int64(1); ; n++ {
			at := start.Add(time.Duration(n-1) * time.Second / w5TickRate)
			if !at.Before(until) || !waitUntil(ctx, at) {
				return
			}
			published.Store(n) // before the send: a tick above a removal's mark was sent after it answered
			t.tick(t.ws, inventoryTick(n, 0))
		}
	})
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 2 * w5Streams, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	url := "http://" + t.hostPort + "/api/hub/live/"
	lats := make([][]time.Duration, w5Streams)
	outs := make([]struct{ posts, non200, errs int }, w5Streams)
	interval := time.Second / w5Changes
	cpu0 := processCPU()
	busy0, busyOK := machineBusy()
	for i, s := range streams {
		wg.Go(func() {
			for n := 0; ; n++ {
				sched := start.Add(time.Duration(i)*interval/w5Streams + time.Duration(n)*interval)
				if !sched.Before(until) || !waitUntil(ctx, sched) {
					return
				}
				remove := n%2 == 0
				body := w5Remove
				if !remove {
					s.removedAfter.Store(-1) // before sending: what the addition brings is due
					body = w5Add(*s.cursor.Load())
				}
				status, err := postRaw(ctx, client, url+s.c.ID+"/subscriptions", t.header, body)
				if err == nil && status == http.StatusOK && remove {
					s.removedAfter.Store(published.Load())
				}
				if sched.Before(from) {
					continue
				}
				o := &outs[i]
				switch {
				case err != nil:
					o.errs++
				case status != http.StatusOK:
					o.non200++
				default:
					o.posts++
					lats[i] = append(lats[i], time.Since(sched))
				}
			}
		})
	}
	wg.Wait()
	res.CPU = processCPU() - cpu0
	if busy1, ok := machineBusy(); ok && busyOK {
		res.Others = max(0, float64(busy1-busy0-res.CPU)/(float64(time.Since(start))*float64(runtime.NumCPU())))
	}
	time.Sleep(200 * time.Millisecond) // let the last envelopes arrive
	res.Ticks = published.Load()
	res.ServerLate = t.tap.violations.Load() - late0
	var all []time.Duration
	for i, s := range streams {
		s.closing.Store(true)
		s.c.Close()
		<-s.done
		s.c = nil
		res.InvReceived += s.inv
		res.ClientLate += s.late
		if s.ended {
			res.Ended++
		}
		res.Posts += outs[i].posts
		res.Non200 += outs[i].non200
		res.Errors += outs[i].errs
		all = append(all, lats[i]...)
	}
	res.Lat = summarize(all)
	return res
}

// postRaw sends one POST with a JSON body and reads the answer.
func postRaw(ctx context.Context, client *http.Client, url string, header http.Header, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
