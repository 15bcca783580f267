package gitexec_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/hub"
)

// TestTimeoutKillsProcessGroup runs a fake git that hangs and leaves a
// grandchild behind: the timeout must end the call promptly and kill the
// grandchild too, which a kill of the leader alone would not.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	is := is.New(t)
	dir := tempDir(t)
	pidFile := filepath.Join(dir, "grandchild.pid")
	script := filepath.Join(dir, "git")
	write(t, script, "#!/bin/sh\nsleep 60 &\necho $! >"+pidFile+"\nexec sleep 60\n")
	is.NoErr(os.Chmod(script, 0o755))
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	r := gitexec.New(gitexec.Options{Git: script, Timeout: 200 * time.Millisecond, Env: testEnv(t), Logger: log})

	done := make(chan error, 1)
	go func() {
		_, err := r.Inspect(t.Context(), dir)
		done <- err
	}()
	select {
	case err := <-done:
		is.True(err != nil)                                  // a hung git is an error
		is.Equal(hub.KindOf(err), hub.Internal)              // an internal failure
		is.Equal(hub.MessageOf(err), "git rev-parse failed") // with a fixed public message
		is.True(strings.Contains(err.Error(), "timed out"))  // the cause says why
	case <-time.After(10 * time.Second):
		t.Fatal("Inspect did not return after its timeout")
	}

	b, err := os.ReadFile(pidFile)
	is.NoErr(err) // the fake git got as far as starting its grandchild
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	is.NoErr(err)
	is.True(exited(t, pid, 10*time.Second)) // the grandchild was killed with the group
}

// exited waits up to limit for process pid to exit, through a pidfd that
// becomes readable when it does.
func exited(t *testing.T, pid int, limit time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true // already exited and reaped
	}
	if err != nil {
		t.Fatalf("pidfd_open: %v", err)
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(limit.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		return n == 1
	}
}
