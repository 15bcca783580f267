package gitcmd

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until the child pid has exited without reaping it, and
// reports true: while the child is an unreaped zombie its pid, and so its
// process group id, cannot be reused, which makes killing the group safe.
// It reports false when the wait failed; the caller then kills the group
// after the reap.
func awaitExit(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, unix.EINTR) {
			return false
		}
	}
}

// groupAttr starts a command in a process group of its own that the
// kernel kills when the Hub dies (Pdeathsig): a git a killed Hub started
// must not go on changing a tree, a clone or a worktree, after the next
// Hub's recovery has settled it.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// sessionAttr starts a clone's git leading a new session whose
// controlling terminal is its stdin, dying with the Hub as groupAttr's.
func sessionAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
}
