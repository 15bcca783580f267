package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// machineBusy is the CPU time all processes have used since boot, from
// /proc/stat (user, nice, system, steal; USER_HZ = 100), false without
// it. Interrupt time is left out: loopback networking does much of the
// benchmark's own TCP work there, where getrusage charges no process.
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	if err != nil || len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 8} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}

// readMachine describes the host, for the report.
func readMachine() [][2]string {
	cpu, kernel := "unknown", "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, _ := strings.Cut(line, ":"); strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return [][2]string{{"CPU", cpu}, {"CPUs (runtime.NumCPU), GOMAXPROCS", fmt.Sprintf("%d, %d", runtime.NumCPU(), runtime.GOMAXPROCS(0))},
		{"Go", runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}, {"Kernel", kernel}}
}

// parseVmRSS is the VmRSS of a /proc/<pid>/status text in bytes, -1 when
// it has none.
func parseVmRSS(status string) int64 {
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			if f := strings.Fields(v); len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n << 10
				}
			}
		}
	}
	return -1
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// openFDs counts this process's open descriptors (less the one reading
// the directory), -1 without /proc.
func openFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries) - 1
}

// procStat is the part of /proc/<pid>/stat W11 reads (State: R, S, Z…).
type procStat struct {
	PID, PPID int
	Comm      string
	State     byte
}

// parseProcStat reads one /proc/<pid>/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses, so the fields
// after it are found from the last ')'.
func parseProcStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 1 || end < open {
		return procStat{}, errors.New("stat: no command name")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	rest := strings.Fields(line[end+1:])
	if err != nil || len(rest) < 2 || len(rest[0]) != 1 {
		return procStat{}, errors.New("stat: bad pid or too few fields")
	}
	ppid, err := strconv.Atoi(rest[1])
	return procStat{PID: pid, PPID: ppid, Comm: line[open+1 : end], State: rest[0][0]}, err
}

// children lists this process's children (ok false without /proc); one
// that exits during the scan is skipped.
func children() (kids []procStat, ok bool) {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		if st, err := parseProcStat(strings.TrimSpace(string(b))); err == nil && st.PPID == os.Getpid() {
			kids = append(kids, st)
		}
	}
	return kids, len(paths) > 0
}
