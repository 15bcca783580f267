//go:build unix && !linux

package credtools

import "os/exec"

// reap waits for cmd, then calls exited. Without waitid's WNOWAIT the
// group can be killed only once its leader was reaped, as soon after as
// can be: only a new process making itself a group leader with the same
// pid in that instant could be hit.
func reap(cmd *exec.Cmd, exited func()) error {
	err := cmd.Wait()
	exited()
	return err
}
