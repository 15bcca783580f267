//go:build unix && !linux

package acplogin_test

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// groupGone reports whether no process of group pgid is left (a zombie
// not yet reaped by init counts as left: without pidfds there is no
// waiting for it here).
func groupGone(t *testing.T, pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// exits reports whether process pid is gone (d is not waited).
func exits(t *testing.T, pid int, d time.Duration) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
