//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Kill sends sig to the process group cmd leads (cmd started by Start or
// StartInTerminal). A group already gone is no error. Call it before
// cmd's leader is reaped (Reap's exited), or while it runs: after that
// its id may be another group's.
func Kill(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
