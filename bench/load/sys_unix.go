//go:build unix

package main

import (
	"syscall"
	"time"
)

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the CPU time of this process and its reaped children: the
// git commands and sessions Wharf ran are Wharf's cost (a session once it
// is reaped); the load generator's is not (it runs during the window, and
// wrk's is subtracted).
func processCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) + rusage(syscall.RUSAGE_CHILDREN) }

// raiseNoFile raises the soft limit of open descriptors to want (or the
// hard limit) and returns the limits now.
func raiseNoFile(want uint64) (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, err
	}
	if rl.Cur < want && rl.Cur < rl.Max {
		rl.Cur = min(want, rl.Max)
		err = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return rl.Cur, rl.Max, err
}
