package acp

import (
	"strconv"
	"syscall"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
)

// BenchmarkThirtyTwoTerminalsRunningYes runs the workspace's bound of
// terminals, each `yes` through 8 MiB, as an agent flooding them would,
// and reports the heap they keep and the process's peak RSS.
func BenchmarkThirtyTwoTerminalsRunningYes(b *testing.B) {
	const perTerminal = 8 << 20
	c := testConn(b, testRuntime(), b.TempDir(), nil)
	asked := 16 << 20 // the most an agent could ask for before
	b.SetBytes(maxTerminals * perTerminal)
	before := heapAfterGC()
	var kept uint64
	for b.Loop() {
		ids := make([]string, 0, maxTerminals)
		for range maxTerminals {
			id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sh",
				Args: []string{"-c", "yes | head -c " + strconv.Itoa(perTerminal)}, OutputByteLimit: &asked})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if _, err := waitDone(b, c, id); err != nil {
				b.Fatal(err)
			}
		}
		kept = max(kept, heapAfterGC()-min(before, heapAfterGC()))
		for _, id := range ids {
			if err := c.terms.release(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(kept>>20), "kept-MiB")
	b.ReportMetric(float64(ru.Maxrss>>10), "peak-RSS-MiB")
}
