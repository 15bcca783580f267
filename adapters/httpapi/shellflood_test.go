package httpapi_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/matryer/is"
)

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A child that floods a terminal whose browser reads nothing fills the
// socket buffers between them and then waits: the Hub holds one message
// per direction, never the flood, and another terminal and the live
// stream answer meanwhile. Once the browser reads, every byte arrives, in
// order.
func TestAFloodIntoATerminalThatReadsNothingKeepsTheHubBounded(t *testing.T) {
	is := is.New(t)
	s, shells, id := shellServer(t)
	before := heapNow()
	flood := s.mustAttach(t, "app", "flood", bearer(id)...)
	flood.SetReadLimit(1 << 20)
	hello(t, flood)

	// Nobody reads: the flood must not get through. (A deadline on what
	// must not happen: a Hub that queued would let the whole flood by
	// well within it, and its heap would hold what passed.)
	select {
	case <-shells.flooded:
		t.Fatalf("the whole flood (%d bytes) passed while the browser read nothing", shells.flood)
	case <-time.After(2 * time.Second):
	}
	grown := int64(heapNow()) - int64(before)
	t.Logf("stalled flood: child wrote %d KiB; heap grew %d KiB", shells.sent.Load()>>10, grown>>10)
	is.True(grown < 8<<20)                     // the Hub's heap holds no flood
	is.True(shells.sent.Load() < shells.flood) // the child waits

	start := time.Now()
	other := s.mustAttach(t, "app", "s1", bearer(id)...)
	hello(t, other)
	_, echo := exchange(t, other, websocket.MessageText, `{"type":"input","data":"ls\r"}`)
	is.Equal(echo, `{"type":"input","data":"ls\r"}`) // another terminal answers
	t.Logf("another terminal attached and echoed in %v", time.Since(start))
	start = time.Now()
	live := s.openLive(t, "ws=app&activity=1", bearer(id)...)
	is.True(len(live.envelopes(1)) == 1) // so does the live stream
	t.Logf("the live stream opened and sent its first envelope in %v", time.Since(start))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start = time.Now()
	var read, lead int64
	for next := uint64(0); read < shells.flood; next++ {
		typ, b, err := flood.Read(ctx)
		is.NoErr(err)                              // the flood arrives
		is.Equal(typ, websocket.MessageBinary)     // as output
		is.Equal(binary.BigEndian.Uint64(b), next) // in order, nothing lost
		read += int64(len(b))
		lead = max(lead, shells.sent.Load()-read)
	}
	took := time.Since(start)
	t.Logf("drained %d MiB in %v (%.0f MiB/s); the child was at most %d KiB ahead of the browser",
		read>>20, took, float64(read)/(1<<20)/took.Seconds(), lead>>10)
	select {
	case <-shells.flooded:
	case <-ctx.Done():
		t.Fatal("the child never finished the flood")
	}
}
