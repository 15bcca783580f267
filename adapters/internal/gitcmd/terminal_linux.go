package gitcmd

import (
	"bytes"
	"errors"
	"os"
	"strconv"
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

// groupRunning reports whether a process of group pgid is alive and not
// a zombie, from /proc. A zombie runs nothing, and a killed group's
// members whose parent died wait as zombies for the system's init, which
// may be slow to reap them (or, in a container, never does).
func groupRunning(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return unix.Kill(-pgid, 0) == nil
	}
	want := []byte(strconv.Itoa(pgid))
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything, so
		// the fields are read after its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
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
