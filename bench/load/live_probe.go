package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// This file holds the live workloads' baselines: the SSE probe, a minimal
// fan-out server in the same process that writes envelopes of the same
// shape to the same number of streams, and the null server, which holds
// streams open without any goroutine or buffer of its own so that the
// client's own memory per stream can be measured.

// sseProbe is the minimal fan-out: one goroutine per stream (its handler)
// waiting on a queue, the publisher encoding each envelope once and
// appending it to every follower's queue. It knows the activity topic
// (every stream with activity=1) and the inventory topic (subscribed in
// `subs` or by POST), with the join a reconnect needs (the latest tick
// unless the cursor is the head, then `ready`) and the activity summary a
// stream opens with; nothing else: no
// authentication, keepalive, backlog bound, broker or store.
type sseProbe struct {
	ws      string
	epoch   string
	mu      sync.Mutex
	byID    map[string]*probeStream
	actSeq  int64
	working bool // the last activity published
	invSeq  int64
	latest  []byte // the latest inventory tick
	nextID  atomic.Int64
}

type probeStream struct {
	id       string
	activity bool
	inv      bool       // guarded by sseProbe.mu
	mu       sync.Mutex // guards queue
	sendMu   sync.Mutex
	queue    []probeItem
	wake     chan struct{}
}

type probeItem struct {
	env []byte
	inv bool
}

func newSSEProbe(ws string) *sseProbe {
	return &sseProbe{ws: ws, epoch: "probe000", byID: map[string]*probeStream{}}
}

// envelopeBytes encodes a LiveEnvelope in the order Wharf writes one.
func envelopeBytes(ws, topic, cursor, kind string, data []byte) []byte {
	b := make([]byte, 0, 96+len(ws)+len(cursor)+len(data))
	b = append(b, `{"ws":`...)
	b = strconv.AppendQuote(b, ws)
	b = append(b, `,"topic":`...)
	b = strconv.AppendQuote(b, topic)
	b = append(b, `,"cursor":`...)
	b = strconv.AppendQuote(b, cursor)
	b = append(b, `,"event":{"kind":`...)
	b = strconv.AppendQuote(b, kind)
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, "}}"...)
}

// activityData is the activity payload Wharf sends for a running
// workspace whose work toggles: finished once it went quiet.
func activityData(working bool) []byte {
	return fmt.Appendf(nil, `{"running":true,"working":%t,"awaiting":false,"finished":%t}`, working, !working)
}

func (p *sseProbe) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/hub/live", p.serveLive)
	mux.HandleFunc("POST /api/hub/live/{id}/subscriptions", p.serveSubs)
	return mux
}

func (s *probeStream) push(items ...probeItem) {
	s.mu.Lock()
	s.queue = append(s.queue, items...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// joinLocked owes s the latest tick (unless cursor is the head) and ready.
// p.mu is held.
func (p *sseProbe) joinLocked(s *probeStream, cursor string) {
	s.inv = true
	head := p.epoch + "." + strconv.FormatInt(p.invSeq, 10)
	var items []probeItem
	if cursor != head && p.latest != nil {
		items = append(items, probeItem{envelopeBytes(p.ws, "inventory", head, "data", p.latest), true})
	}
	s.push(append(items, probeItem{envelopeBytes(p.ws, "inventory", head, "ready", nil), true})...)
}

func (p *sseProbe) serveLive(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var subs []struct{ Topic, Cursor string }
	if raw := q.Get("subs"); raw != "" {
		if json.Unmarshal([]byte(raw), &subs) != nil {
			http.Error(w, `{"error":"subs must be a JSON array"}`, http.StatusBadRequest)
			return
		}
	}
	s := &probeStream{id: "p" + strconv.FormatInt(p.nextID.Add(1), 10), activity: q.Get("activity") == "1", wake: make(chan struct{}, 1)}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store, no-transform")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	buf.WriteString(`: open` + "\n\nevent: hello\ndata: " + `{"streamId":"` + s.id + `"}` + "\n\n")
	w.Write(buf.Bytes())
	if rc.Flush() != nil {
		return
	}
	p.mu.Lock()
	p.byID[s.id] = s
	if s.activity {
		// The summary, as Wharf opens activity with one per workspace:
		// the current value at the current cursor.
		s.push(probeItem{env: envelopeBytes(p.ws, "activity", p.epoch+"."+strconv.FormatInt(p.actSeq, 10), "data", activityData(p.working))})
	}
	for _, sub := range subs {
		if sub.Topic == "inventory" {
			p.joinLocked(s, sub.Cursor)
		}
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.byID, s.id)
		p.mu.Unlock()
	}()
	for {
		select {
		case <-s.wake:
		case <-r.Context().Done():
			return
		}
		s.sendMu.Lock()
		s.mu.Lock()
		items := s.queue
		s.queue = nil
		s.mu.Unlock()
		buf.Reset()
		for _, it := range items {
			buf.WriteString("event: live\ndata: ")
			buf.Write(it.env)
			buf.WriteString("\n\n")
		}
		_, err := w.Write(buf.Bytes())
		if err == nil {
			err = rc.Flush()
		}
		s.sendMu.Unlock()
		if err != nil {
			return
		}
	}
}

// serveSubs applies {"add":[…], "remove":[…]} to the inventory topic and,
// like Wharf, answers once no batch holding a removed envelope is being
// written.
func (p *sseProbe) serveSubs(w http.ResponseWriter, r *http.Request) {
	var change struct {
		Add    []struct{ Topic, Cursor string }
		Remove []struct{ Topic string }
	}
	if json.NewDecoder(r.Body).Decode(&change) != nil {
		http.Error(w, `{"error":"invalid JSON body"}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	s := p.byID[r.PathValue("id")]
	if s == nil {
		p.mu.Unlock()
		http.Error(w, `{"error":"unknown stream"}`, http.StatusNotFound)
		return
	}
	for _, rm := range change.Remove {
		if rm.Topic == "inventory" {
			s.mu.Lock()
			s.inv = false
			kept := s.queue[:0]
			for _, it := range s.queue {
				if !it.inv {
					kept = append(kept, it)
				}
			}
			s.queue = kept
			s.mu.Unlock()
		}
	}
	for _, add := range change.Add {
		if add.Topic == "inventory" {
			p.joinLocked(s, add.Cursor)
		}
	}
	p.mu.Unlock()
	s.sendMu.Lock()
	s.sendMu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true}` + "\n"))
}

// publishActivity sends every activity follower one change of ws.
func (p *sseProbe) publishActivity(working bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.actSeq++
	p.working = working
	env := envelopeBytes(p.ws, "activity", p.epoch+"."+strconv.FormatInt(p.actSeq, 10), "data", activityData(working))
	for _, s := range p.byID {
		if s.activity {
			s.push(probeItem{env: env})
		}
	}
}

// publishInventory sends every inventory follower one tick.
func (p *sseProbe) publishInventory(data []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.invSeq++
	p.latest = data
	env := envelopeBytes(p.ws, "inventory", p.epoch+"."+strconv.FormatInt(p.invSeq, 10), "data", data)
	for _, s := range p.byID {
		if s.inv {
			s.push(probeItem{env: env, inv: true})
		}
	}
}

// nullServer accepts connections and answers each with a stream's head and
// opening, written from its one accepting goroutine, then holds it open
// untouched: what remains per stream is the client's side (and a socket).
type nullServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

var nullOpening = func() []byte {
	body := ": open\n\nevent: hello\ndata: {\"streamId\":\"null\"}\n\n"
	return fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"+
		"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
}()

func startNullServer() (*nullServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &nullServer{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(n.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			c.Write(nullOpening)
			n.mu.Lock()
			n.conns = append(n.conns, c)
			n.mu.Unlock()
		}
	}()
	return n, nil
}

func (n *nullServer) hostPort() string { return n.ln.Addr().String() }

func (n *nullServer) close() {
	n.ln.Close()
	<-n.done
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.conns {
		c.Close()
	}
	n.conns = nil
}
