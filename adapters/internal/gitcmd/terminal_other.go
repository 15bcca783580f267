//go:build !linux

package gitcmd

import "syscall"

// awaitExit cannot wait without reaping here: the caller kills the group
// after the reap.
func awaitExit(int) bool { return false }

// groupAttr starts a command in a process group of its own (no parent
// death signal here).
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// sessionAttr starts a clone's git leading a new session whose
// controlling terminal is its stdin.
func sessionAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}
