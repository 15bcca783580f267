//go:build linux

package sshhost_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/hub"
)

// procGroup is the process group of pid from /proc, or -1 when pid is
// gone (or a zombie: it runs nothing).
func procGroup(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces, so read after ')'.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 3 || fields[0] == "Z" {
		return -1
	}
	pgrp, _ := strconv.Atoi(fields[2])
	return pgrp
}

// parentOf is the parent of pid from /proc (a session's child's is the
// start script, which cleans up after it), or -1.
func parentOf(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) < 2 {
		return -1
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// waitGone waits, up to testTimeout, for process pid to exit (a pidfd
// becomes readable then), and reports whether it did. A pid already gone
// is gone.
func waitGone(t *testing.T, pid int) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return errors.Is(err, unix.ESRCH)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(testTimeout)
	for range 1000 { // bounded: each round ends at an event or the deadline
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds())+1)
		if err == nil && n > 0 {
			return true
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			t.Fatal(err)
		}
	}
	return false
}

// groupAlive reports whether any process of group pgid runs, from /proc.
func groupAlive(t *testing.T, pgid int) bool {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && procGroup(pid) == pgid {
			return true
		}
	}
	return false
}

// entries lists the names in dir ("" when it does not exist).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

func TestStopsLeaveNothingOnTheHost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   string
		grace  time.Duration
		forced bool
	}{
		// The polite stop's grace leaves room for a child built with the
		// race detector on a busy machine; the forced one is measured.
		{"a polite stop", "", 10 * time.Second, false},
		{"a forced stop of a session that ignores the end of its input", modeIgnoreEnd, time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			r := newRig(t, func(o *sshhost.Options) {
				o.Env = append(os.Environ(), modeEnv+"="+tc.mode)
				o.StopGrace = tc.grace
			})
			rs := r.start(t, "alpha")
			pid := sshhost.RemotePid(rs)
			lsock, rsock, pidFile := sshhost.Sockets(rs)
			is.True(pid > 1)              // the child's pid is known
			is.Equal(procGroup(pid), pid) // and it leads its own process group
			is.Equal(filepath.Dir(rsock), filepath.Join(r.root, "run"))
			for _, p := range []string{lsock, rsock} {
				fi, err := os.Lstat(p)
				is.NoErr(err)                                    // both ends of the forward exist
				is.True(fi.Mode()&os.ModeSocket != 0)            // as sockets
				is.Equal(fi.Mode().Perm()&0o077, os.FileMode(0)) // closed to others
			}
			fi, err := os.Stat(filepath.Join(r.root, "run"))
			is.NoErr(err)
			is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // in a private runtime folder
			_, err = os.Stat(pidFile)
			is.NoErr(err) // with its pid file

			began := time.Now()
			is.NoErr(rs.Stop(testContext(t))) // stop
			took := time.Since(began)
			is.True(!groupAlive(t, pid))                                                           // nothing of the session runs on the host
			is.Equal(entries(t, filepath.Join(r.root, "run")), []string(nil))                      // no socket or pid file is left there
			is.Equal(entries(t, r.opts.RuntimeDir), []string{filepath.Base(r.host.ControlPath())}) // nor on the Hub, but the master's
			is.Equal(r.host.Live(), int64(0))                                                      // and the session is gone
			if tc.forced {
				is.True(took >= time.Second)                                               // killed after the grace
				is.True(strings.Contains(r.logs.String(), "ignored the end of its input")) // and logged why
			} else {
				is.True(!strings.Contains(r.logs.String(), "killing it")) // no kill was needed
			}
			_, err = rs.Facts(testContext(t))
			is.Equal(hub.KindOf(err), hub.Unavailable) // an ended session answers nothing
		})
	}
}

func TestASessionEndsWhenTheHostsSSHDCrashesAndLeavesNothing(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	rs := r.start(t, "alpha")
	pid := sshhost.RemotePid(rs)
	script := parentOf(pid)
	is.True(r.srv.Signal(syscall.SIGKILL) > 0) // the host's sshd dies
	select {
	case <-rs.Done():
	case <-time.After(testTimeout):
		t.Fatal("the session did not end")
	}
	is.True(waitGone(t, pid))                                              // its child read the end of its input and exited after its grace
	is.True(!groupAlive(t, pid))                                           // with everything it started
	is.True(waitGone(t, script))                                           // and its start script
	is.Equal(entries(t, filepath.Join(r.root, "run")), []string(nil))      // cleaned up after it
	is.True(strings.Contains(r.logs.String(), "session ended on its own")) // the surprise is logged

	again := r.start(t, "alpha")
	_, err := again.Facts(testContext(t))
	is.NoErr(err) // and the workspace starts again, over a new master
}

func TestRemoveWorkspaceDataRemovesItsFolderOnTheHost(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	rs := r.start(t, "alpha")
	data := entries(t, filepath.Join(r.root, "data"))
	is.Equal(len(data), 1)                                                                  // the session keeps its data on the host
	is.Equal(hub.KindOf(r.host.RemoveWorkspaceData(testContext(t), "alpha")), hub.Conflict) // not while it runs
	is.NoErr(rs.Stop(testContext(t)))
	is.NoErr(r.host.RemoveWorkspaceData(testContext(t), "alpha"))
	is.Equal(entries(t, filepath.Join(r.root, "data")), []string(nil)) // gone once stopped
}

func TestExecRunsTheCopiedBinaryAsAStream(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	rw, err := r.host.Exec(testContext(t), "cat")
	is.NoErr(err)
	_, err = rw.Write([]byte("hello\n"))
	is.NoErr(err)
	buf := make([]byte, 6)
	_, err = io.ReadFull(rw, buf)
	is.NoErr(err)
	is.Equal(string(buf), "hello\n") // through the remote binary and back
	is.NoErr(rw.Close())             // it ends with its input
	is.Equal(r.host.Copies(), int64(1))
}
