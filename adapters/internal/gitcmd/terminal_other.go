//go:build !linux

package gitcmd

import "syscall"

// awaitExit cannot wait without reaping here: the caller kills the group
// after the reap.
func awaitExit(int) bool { return false }

// groupRunning reports whether group pgid has a member (a zombie
// counts: nothing tells them apart here).
func groupRunning(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

// groupAttr starts a command in a process group of its own (no parent
// death signal here).
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// sessionAttr starts a clone's git leading a new session whose
// controlling terminal is its stdin.
func sessionAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}
