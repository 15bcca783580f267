package local

import (
	"errors"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until the child pid has exited without reaping it, and
// reports true: while the child is an unreaped zombie its pid, and so its
// process group id, cannot be reused, which makes killing the group safe.
// It reports false when the wait failed, and the caller falls back to
// killing the group after the reap.
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
