package shells

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
)

// waitState waits until cond holds of s (called under s.mu), waking at
// each change of s, within the wait bound.
func waitState(t *testing.T, s *shell, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: not within %s", what, wait)
		}
	}
}

// onlyClient is s's one attached client.
func onlyClient(t *testing.T, s *shell) *client {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.clients) != 1 {
		t.Fatalf("%d clients attached, want 1", len(s.clients))
	}
	for c := range s.clients {
		return c
	}
	return nil
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func TestAFloodToAClientThatNeverAcksStaysBoundedAndStallsNothingElse(t *testing.T) {
	is := is.New(t)
	r, srv := newTestRegistry(t, Options{})
	heap0 := heapInUse()
	flood, err := r.Create("flood", 80, 24)
	is.NoErr(err) // the flooding shell starts
	s, _ := r.get(flood.ID)
	slow := attach(t, srv, flood.ID, "", false)
	slow.input("yes\n")
	is.True(slow.readUntil(func() bool { return slow.out.Len() >= Window })) // a window of output arrives
	c := onlyClient(t, s)
	// The reader stops once the ring holds all it may: everything after
	// what the client was sent.
	waitState(t, s, "the reader blocked", func() bool { return s.blocked })
	s.mu.Lock()
	is.Equal(c.sent-c.acked, int64(Window))  // exactly the window is unacknowledged
	is.True(s.ring.head-c.sent <= RingBytes) // nothing the client was not sent is overwritten
	is.Equal(len(s.ring.buf), RingBytes)     // the ring never grows
	is.Equal(slow.out.Len(), Window)         // nor was the client sent past its window
	held := s.ring.head
	s.mu.Unlock()

	// Another shell answers at once, and the registry's revision moves.
	other, err := r.Create("other", 80, 24)
	is.NoErr(err) // another shell starts during the flood
	_, moved := r.Revision()
	tm := attach(t, srv, other.ID, "", true)
	within(t, moved, "revision move at attach") // the attached flag moved the revision
	tm.input("echo still-$((20+1))\n")
	is.True(tm.see("still-21")) // the other shell echoes

	s.mu.Lock()
	head := s.ring.head
	s.mu.Unlock()
	is.Equal(head, held) // the flood stayed stopped meanwhile
	grown := int64(heapInUse()) - int64(heap0)
	t.Logf("heap in use grew by %d KiB during the flood", grown/1024)
	is.True(grown < 8<<20) // the child's memory stays bounded

	// The client leaves: with nobody attached the ring just overwrites.
	slow.conn.Close(websocket.StatusNormalClosure, "")
	waitState(t, s, "the flood running on", func() bool { return s.ring.head > held+4*RingBytes })
	s.mu.Lock()
	is.Equal(len(s.ring.buf), RingBytes)          // the ring still holds 256 KiB
	is.Equal(s.ring.start, s.ring.head-RingBytes) // its last 256 KiB
	s.mu.Unlock()
	back := attach(t, srv, flood.ID, "", true)
	back.input("\x03")
	back.input("echo stopped-$((1+1))\n")
	is.True(back.see("stopped-2")) // an acknowledging client drains the flood and stops it
	grown = int64(heapInUse()) - int64(heap0)
	t.Logf("heap in use grew by %d KiB after draining", grown/1024)
	is.True(grown < 8<<20) // still bounded
}

func TestAClientThatAcksNothingFor30sIsClosed(t *testing.T) {
	is := is.New(t)
	clock := fakes.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r, srv := newTestRegistry(t, Options{Clock: clock})
	in, err := r.Create("", 80, 24)
	is.NoErr(err) // the shell starts
	s, _ := r.get(in.ID)
	slow := attach(t, srv, in.ID, "", false)
	slow.input("yes\n")
	is.True(slow.readUntil(func() bool { return slow.out.Len() >= Window })) // a window arrives
	c := onlyClient(t, s)
	waitState(t, s, "the no-ack timer armed", func() bool { return c.stall != 0 })
	clock.Advance(DefaultNoAck - time.Second)
	s.mu.Lock()
	_, still := s.clients[c]
	s.mu.Unlock()
	is.True(still) // 29 s without an ack are tolerated
	clock.Advance(time.Second)
	is.Equal(slow.readClose(), websocket.StatusPolicyViolation) // at 30 s the client is closed
	is.Equal(slow.reason, "not reading")                        // saying why
	waitState(t, s, "the client gone", func() bool { return len(s.clients) == 0 })
	is.True(!r.List()[0].Attached) // the shell is listed detached

	// A client that acknowledges is never closed, however long it takes.
	ok := attach(t, srv, in.ID, "", true)
	is.True(ok.readUntil(func() bool { return ok.out.Len() >= 4*Window })) // the flood flows to it
	ok.input("\x03")
	ok.input("echo calm-$((3*3))\n")
	is.True(ok.see("calm-9")) // it drains the flood
	clock.Advance(time.Hour)
	ok.input("echo later-$((4*4))\n")
	is.True(ok.see("later-16"))                          // with nothing waiting, an hour without acks closes nothing
	is.True(!strings.Contains(ok.reason, "not reading")) // never closed for not reading
}
