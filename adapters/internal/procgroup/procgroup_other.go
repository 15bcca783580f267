//go:build unix && !linux

package procgroup

import (
	"os/exec"
	"syscall"
)

// Start starts cmd as the leader of its own process group, killed as a
// group. These systems have no parent-death signal: only the orderly ends
// of a connection and of the workspace child kill it.
func Start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// StartInTerminal starts cmd leading a new session whose controlling
// terminal is its stdin (a PTY's follower).
func StartInTerminal(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	return cmd.Start()
}

// Reap waits for cmd (its process and its output), then calls exited:
// without waitid's WNOWAIT here, the group can only be killed once the
// leader is reaped, as soon after as can be.
func Reap(cmd *exec.Cmd, exited func()) error {
	err := cmd.Wait()
	exited()
	return err
}
