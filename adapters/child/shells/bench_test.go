package shells

import (
	"runtime"
	"strings"
	"testing"
)

// BenchmarkCatThroughTheWebSocket measures a shell's output reaching an
// acknowledging client: `head -c 16 MiB` of zeroes per iteration, its
// throughput and the heap the child holds meanwhile (sampled at every
// message).
func BenchmarkCatThroughTheWebSocket(b *testing.B) {
	r, srv := newTestRegistry(b, Options{})
	in, err := r.Create("", 80, 24)
	if err != nil {
		b.Fatal(err)
	}
	tm := attach(b, srv, in.ID, "", true)
	const size = 16 << 20
	var peak uint64
	var ms runtime.MemStats
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		marker := "done-" + strings.Repeat("x", i%3)
		tm.hello.Offset += int64(tm.out.Len()) // acks keep counting from the start
		tm.out.Reset()
		tm.input("head -c " + itoa64(size) + " /dev/zero; echo " + marker + "-$((1+1))\n")
		n := 0
		tm.readUntil(func() bool {
			n++
			if n%256 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
			// Keep only the tail: the client's own buffer is not the child's.
			if tm.out.Len() > 4096 {
				tail := append([]byte(nil), tm.out.Bytes()[tm.out.Len()-64:]...)
				tm.hello.Offset += int64(tm.out.Len() - len(tail))
				tm.out.Reset()
				tm.out.Write(tail)
			}
			return strings.Contains(tm.out.String(), marker+"-2")
		})
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
