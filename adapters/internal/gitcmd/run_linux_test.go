package gitcmd_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// hangingGit is a fake git that leaves a grandchild behind, writing its
// pid into the FIFO at fifo, then hangs.
func hangingGit(t *testing.T, fifo string) string {
	return fakeGit(t, "sleep 60 &\necho $! >"+fifo+"\nexec sleep 60\n")
}

// grandchild makes a FIFO and returns its path and a channel that
// delivers the pid a hangingGit writes into it.
func grandchild(t *testing.T) (string, <-chan int) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "grandchild")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	pids := make(chan int, 1)
	go func() {
		b, err := os.ReadFile(fifo) // blocks until the script writes and closes it
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			pids <- n
		}
	}()
	t.Cleanup(func() {
		// Unblock the reader when no script ever opened the FIFO.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	return fifo, pids
}

func receive(t *testing.T, pids <-chan int) int {
	t.Helper()
	select {
	case pid := <-pids:
		return pid
	case <-time.After(testWait):
		t.Fatal("no grandchild pid")
		return 0
	}
}

// TestTimeoutKillsProcessGroup: the timeout must end the call promptly and
// kill the grandchild too, which a kill of the leader alone would not.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fifo, pids := grandchild(t)
	r := gitcmd.New(gitcmd.Options{Git: hangingGit(t, fifo), Timeout: 200 * time.Millisecond})
	_, err := r.Run(testContext(t), "", "version")
	is.True(errors.Is(err, gitcmd.ErrTimeout))                // the timeout is reported
	is.True(errors.Is(err, context.DeadlineExceeded))         // as a deadline
	is.True(strings.Contains(err.Error(), "timed out after")) // saying after how long
	is.True(exited(t, receive(t, pids)))                      // the grandchild was killed with the group
}

func TestCancelKillsProcessGroup(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fifo, pids := grandchild(t)
	r := gitcmd.New(gitcmd.Options{Git: hangingGit(t, fifo), Timeout: time.Minute})
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, "", "version")
		done <- err
	}()
	pid := receive(t, pids) // the command runs, its grandchild too
	cancel()
	select {
	case err := <-done:
		is.True(errors.Is(err, context.Canceled)) // the caller's end is reported
	case <-time.After(testWait):
		t.Fatal("Run did not return after its context ended")
	}
	is.True(exited(t, pid)) // the grandchild was killed with the group
}

// TestWaitDelay: a git that exits while a stray process holds its output
// open fails after WaitDelay rather than hang.
func TestWaitDelay(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fifo, pids := grandchild(t)
	git := fakeGit(t, "sleep 60 &\necho $! >"+fifo+"\nexit 0\n")
	r := gitcmd.New(gitcmd.Options{Git: git, WaitDelay: 100 * time.Millisecond})
	_, err := r.Run(testContext(t), "", "version")
	pid := receive(t, pids)
	defer syscall.Kill(pid, syscall.SIGKILL)   // git's exit leaves the stray behind
	is.True(errors.Is(err, exec.ErrWaitDelay)) // the held pipes end the wait
}

// exited waits up to testWait for process pid to exit, through a pidfd
// that becomes readable when it does.
func exited(t *testing.T, pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true // already exited and reaped
	}
	if err != nil {
		t.Fatalf("pidfd_open: %v", err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(testWait.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return n == 1
	}
}
