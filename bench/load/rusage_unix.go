//go:build unix

package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process and its
// reaped children have used. The children are the git commands and
// workspace sessions Wharf runs: their CPU is Wharf's cost, not a
// disturbance from outside (a running session's time counts once it is
// reaped).
func processCPU() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return 0
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return total
}

// machineBusy returns the CPU time all processes have used since boot, from
// /proc/stat (user, nice, system and steal, in USER_HZ = 100 ticks per
// second), and false where /proc/stat is not available. Interrupt and
// softirq time are left out: loopback networking runs much of this
// benchmark's own TCP work there, where getrusage does not charge it to the
// process.
func machineBusy() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 8} { // user nice system steal
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}

// raiseNoFile raises the soft limit of open descriptors to want, or to the
// hard limit when that is lower, and returns the soft and hard limits now.
func raiseNoFile(want uint64) (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	if rl.Cur < want && rl.Cur < rl.Max {
		rl.Cur = min(want, rl.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return rl.Cur, rl.Max, err
		}
	}
	return rl.Cur, rl.Max, nil
}
