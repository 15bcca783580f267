package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
)

// This file measures what the live streams hold: the process's resident
// memory, the Go runtime's view of it, and the goroutines that belong to
// the servers.

// parseVmRSS returns the VmRSS of a /proc/<pid>/status text in bytes, and
// false when it has none.
func parseVmRSS(status string) (int64, bool) {
	for line := range strings.Lines(status) {
		v, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		return n << 10, true
	}
	return 0, false
}

// readRSS returns this process's resident set size, or -1.
func readRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	n, ok := parseVmRSS(string(b))
	if !ok {
		return -1
	}
	return n
}

// serverFrames are the functions whose presence in a goroutine's stack
// makes it the servers': net/http's per-connection goroutines and
// anything running Wharf's own packages (the benchmark is package main).
var serverFrames = [][]byte{
	[]byte("net/http.(*conn).serve("),
	[]byte("net/http.(*connReader).backgroundRead("),
	[]byte("net/http.(*Server).Serve("),
	[]byte("github.com/wharfhub/wharf/"),
}

// classifyStacks counts the goroutines of a runtime.Stack(all) dump that
// belong to the servers (a server frame anywhere in the stack, "created
// by" lines aside), to the load generator (otherwise a frame of package
// main) and to neither (the runtime's, the HTTP client's).
func classifyStacks(dump []byte) (server, client, other int) {
	for g := range bytes.SplitSeq(dump, []byte("\n\n")) {
		if !bytes.HasPrefix(g, []byte("goroutine ")) {
			continue
		}
		isServer, isClient := false, false
		for line := range bytes.SplitSeq(g, []byte("\n")) {
			if bytes.HasPrefix(line, []byte("\t")) || bytes.HasPrefix(line, []byte("created by ")) {
				continue
			}
			for _, f := range serverFrames {
				if bytes.Contains(line, f) {
					isServer = true
				}
			}
			if bytes.HasPrefix(line, []byte("main.")) {
				isClient = true
			}
		}
		switch {
		case isServer:
			server++
		case isClient:
			client++
		default:
			other++
		}
	}
	return server, client, other
}

// goroutineCounts classifies every goroutine of the process now.
func goroutineCounts() (server, client, other int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return classifyStacks(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// memSnap is the process's memory and goroutines at one moment, taken
// after a collection that returned what it could to the OS.
type memSnap struct {
	RSS          int64  // resident set size
	Heap, Stacks uint64 // the runtime's heap in use and goroutine stacks in use
	Server       int    // the servers' goroutines
	Client       int    // the load generator's
}

func takeMem() memSnap {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := memSnap{RSS: readRSS(), Heap: ms.HeapInuse, Stacks: ms.StackInuse}
	s.Server, s.Client, _ = goroutineCounts()
	return s
}

// liveHeapBytes is the heap the last collection found live.
func liveHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// perStream is the growth from a to b per stream, in bytes.
func perStream(a, b int64, n int) float64 {
	if n == 0 || a < 0 || b < 0 {
		return 0
	}
	return float64(b-a) / float64(n)
}
