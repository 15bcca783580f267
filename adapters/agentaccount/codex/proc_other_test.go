//go:build !linux

package codex_test

import (
	"errors"
	"syscall"
)

// Without /proc a zombie counts as alive: these can only be asked once
// the processes were reaped.

// groupGone reports whether no process is left in process group pgid.
func groupGone(pgid int) bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }

// processGone reports whether pid is not a process.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
