//go:build unix && !linux

package acp

import (
	"os/exec"
	"syscall"
)

// spawn starts cmd as the leader of its own process group, killed as a
// group. These systems have no parent-death signal: only the orderly ends
// of a connection and of the workspace child kill it.
func spawn(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// reap waits for cmd (its process and its output), then calls exited:
// without waitid's WNOWAIT here, the group can only be killed once the
// leader is reaped, as soon after as can be.
func reap(cmd *exec.Cmd, exited func()) error {
	err := cmd.Wait()
	exited()
	return err
}
