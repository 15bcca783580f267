//go:build !linux

package gitcmd

import "syscall"

// awaitExit cannot wait without reaping here: the caller kills the group
// after the reap.
func awaitExit(int) bool { return false }

// groupRunning reports whether group pgid has a member (a zombie
// counts: nothing tells them apart here).
func groupRunning(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
