package credtools

import (
	"os/exec"

	"golang.org/x/sys/unix"
)

// reap waits for cmd's process to exit and calls exited before reaping
// it: until then the process is a zombie whose pid, and so its process
// group's id, nobody else can take, so exited may kill the group. Then it
// reaps it and returns what cmd.Wait returns.
func reap(cmd *exec.Cmd, exited func()) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	exited()
	return cmd.Wait()
}
