package acp

import (
	"runtime"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"
)

func TestATerminalKeepsTheEndOfItsOutput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int
		writes []string
		want   string
		cut    bool
	}{
		{"nothing", 8, nil, "", false},
		{"under the limit", 8, []string{"ab", "cd"}, "abcd", false},
		{"exactly the limit", 4, []string{"ab", "cd"}, "abcd", false},
		{"past the limit in small writes", 4, []string{"ab", "cd", "ef"}, "cdef", true},
		{"wrapping many times", 3, []string{"a", "b", "c", "d", "e", "f", "g"}, "efg", true},
		{"one write past the limit", 4, []string{"abcdefgh"}, "efgh", true},
		{"a big write after a small one", 4, []string{"x", "abcd"}, "abcd", true},
		{"a write straddling the end", 5, []string{"abc", "defg"}, "cdefg", true},
		{"a character cut in two is dropped", 4, []string{"aé", "xyz"}, "xyz", true}, // é is two bytes; its second is kept first
		{"a whole character kept", 5, []string{"aé", "xyz"}, "éxyz", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			o := newOutput(tc.limit)
			for _, w := range tc.writes {
				o.Write([]byte(w))
			}
			got, cut := o.Tail(o.Len())
			is.Equal(got, tc.want)          // the last bytes, at a character
			is.Equal(cut, tc.cut)           // and whether some were dropped
			is.True(cap(o.buf) <= tc.limit) // never more memory than the limit
		})
	}
}

func TestATerminalsTailIsItsLastBytes(t *testing.T) {
	is := is.New(t)
	o := newOutput(8)
	o.Write([]byte("0123456789")) // keeps 23456789
	o.Write([]byte("ab"))         // 456789ab
	got, cut := o.Tail(3)
	is.Equal(got, "9ab") // the last three
	is.True(cut)         // before which something is missing
	got, _ = o.Tail(100)
	is.Equal(got, "456789ab") // at most what is kept
}

// Once full, a write copies only its own bytes and allocates nothing.
func TestAFullTerminalWritesWithoutAllocating(t *testing.T) {
	is := is.New(t)
	o := newOutput(1 << 20)
	chunk := []byte(strings.Repeat("y\n", 16<<10))
	for range 64 {
		o.Write(chunk)
	}
	allocs := testing.AllocsPerRun(100, func() { o.Write(chunk) })
	is.Equal(allocs, 0.0)       // no allocation per write
	is.Equal(cap(o.buf), 1<<20) // and no more than the limit held
}

// BenchmarkATerminalUnderAYesFlood writes `yes` output in pipe-sized
// chunks into a terminal keeping the largest output an agent may ask
// for: no allocation and no copy of the kept output per write.
func BenchmarkATerminalUnderAYesFlood(b *testing.B) {
	o := newOutput(maxOutputLimit)
	chunk := []byte(strings.Repeat("y\n", 32<<10))
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		o.Write(chunk)
	}
	b.ReportMetric(float64(cap(o.buf)), "kept-bytes")
}

// heapAfterGC is the heap in use once garbage is collected.
func heapAfterGC() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A flood of output (`yes` in every terminal) keeps no more than each
// terminal's bound in memory.
func TestAFloodOfOutputKeepsNoMoreThanTheBound(t *testing.T) {
	is := is.New(t)
	c := testConn(t, testRuntime(), t.TempDir(), nil)
	const terminals = 4
	asked := 16 << 20
	chunk := []byte(strings.Repeat("y\n", 128<<10))
	before := heapAfterGC()
	for range terminals {
		id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "true", OutputByteLimit: &asked})
		is.NoErr(err)
		_, err = waitDone(t, c, id)
		is.NoErr(err)
		tm := c.terms.byID[id]
		for range 2 * asked / len(chunk) {
			_, _ = tm.Write(chunk)
		}
	}
	retained := heapAfterGC() - before
	t.Logf("retained %d MiB for %d flooded terminals", retained>>20, terminals)
	is.True(retained <= uint64(terminals*maxOutputLimit+1<<20)) // each keeps at most its bound
}
