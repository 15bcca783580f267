package local_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/hub"
)

// grandchildFIFO makes the FIFO a modeGrandchild child writes to and
// reads it: pid delivers the grandchild's pid, gone is closed once the
// grandchild (the last writer) has died.
func grandchildFIFO(t *testing.T) (fifo string, pid <-chan int, gone <-chan struct{}) {
	t.Helper()
	fifo = filepath.Join(t.TempDir(), "grandchild")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	pid, gone = readFIFO(t, fifo)
	return fifo, pid, gone
}

// readFIFO reads one child's use of fifo; see grandchildFIFO.
func readFIFO(t *testing.T, fifo string) (pid <-chan int, gone <-chan struct{}) {
	pids, closed := make(chan int, 1), make(chan struct{})
	go func() {
		defer close(closed)
		f, err := os.Open(fifo) // blocks until the child opens the other end
		if err != nil {
			return
		}
		defer f.Close()
		br := bufio.NewReader(f)
		line, _ := br.ReadString('\n')
		if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
			pids <- n
		}
		_, _ = io.Copy(io.Discard, br)
	}()
	t.Cleanup(func() {
		// Unblock the reader when no child ever opened the FIFO, and never
		// leave a sleeping grandchild behind a failed test.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		select {
		case <-closed: // every writer is gone, the grandchild included
		default:
			select {
			case n := <-pids: // still holding the FIFO, so still alive
				syscall.Kill(n, syscall.SIGKILL)
			default:
			}
		}
	})
	return pids, closed
}

// receivePid waits for the grandchild's pid.
func receivePid(t *testing.T, pid <-chan int) int {
	t.Helper()
	select {
	case n := <-pid:
		return n
	case <-time.After(testTimeout):
		t.Fatal("no grandchild pid")
		return 0
	}
}

func TestStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		mode       string
		wantSignal syscall.Signal // 0: a clean exit 0
	}{
		{"graceful on SIGTERM", modeServe, 0},
		{"escalates to SIGKILL", modeIgnoreTerm, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			grace := 500 * time.Millisecond
			b, logs := newBackend(t, tc.mode, local.Options{StopGrace: grace})
			rs := startSession(t, b, "alpha")
			pid, sock := local.Pid(rs), local.SocketOf(rs)
			fi, err := os.Lstat(sock)
			is.NoErr(err)                                                 // the socket exists while running
			is.Equal(fi.Mode().Perm(), os.FileMode(0o600))                // and is private
			is.True(len(filepath.Base(sock)) == len("0123456789ab.sock")) // named by a short hash

			began := time.Now()
			is.NoErr(rs.Stop(testContext(t))) // stop
			took := time.Since(began)
			st := local.ExitState(rs)
			is.True(st != nil) // Done is closed and the child reaped
			ws := st.Sys().(syscall.WaitStatus)
			if tc.wantSignal == 0 {
				is.True(ws.Exited() && ws.ExitStatus() == 0) // a clean exit: SIGKILL was never needed
			} else {
				is.True(ws.Signaled() && ws.Signal() == tc.wantSignal)      // killed
				is.True(took >= grace)                                      // after the grace
				is.True(strings.Contains(logs.String(), "ignored SIGTERM")) // and logged why
			}
			is.True(procGone(pid)) // no zombie
			_, err = os.Lstat(sock)
			is.True(errors.Is(err, os.ErrNotExist)) // the socket is removed
			is.Equal(b.Live(), int64(0))            // nothing left running
			is.NoErr(rs.Stop(testContext(t)))       // a second Stop is a no-op
		})
	}
}

func TestStopKillsGrandchildren(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fifo, pid, gone := grandchildFIFO(t)
	b, _ := newBackend(t, modeGrandchild, local.Options{}, outEnv+"="+fifo)
	rs := startSession(t, b, "alpha")
	receivePid(t, pid)
	select {
	case <-gone:
		t.Fatal("the grandchild died early")
	default:
	}
	is.NoErr(rs.Stop(testContext(t))) // stop
	waitClosed(t, gone, "grandchild killed with the group")
}

func TestChildDiesOnItsOwn(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	fifo, pid, gone := grandchildFIFO(t)
	b, logs := newBackend(t, modeGrandchild, local.Options{}, outEnv+"="+fifo)
	rs := startSession(t, b, "alpha")
	receivePid(t, pid)
	child, sock := local.Pid(rs), local.SocketOf(rs)

	is.NoErr(syscall.Kill(child, syscall.SIGKILL)) // kill -9 the child behind the backend's back
	waitClosed(t, rs.Done(), "Done after the child died")
	waitClosed(t, gone, "grandchild killed with the group")
	ws := local.ExitState(rs).Sys().(syscall.WaitStatus)
	is.True(ws.Signaled() && ws.Signal() == syscall.SIGKILL) // the child was reaped
	is.True(procGone(child))                                 // no zombie
	_, err := os.Lstat(sock)
	is.True(errors.Is(err, os.ErrNotExist))                              // the socket is removed
	is.True(strings.Contains(logs.String(), "session ended on its own")) // the surprise is logged
	is.NoErr(rs.Stop(testContext(t)))                                    // Stop of an ended session is a no-op
	is.Equal(b.Live(), int64(0))                                         // nothing left running

	readFIFO(t, fifo) // the next child's grandchild needs a reader of the FIFO too
	again := startSession(t, b, "alpha")
	_, err = again.Facts(testContext(t))
	is.NoErr(err) // the workspace starts again
}

func TestEnvironmentIsSanitized(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	out := filepath.Join(t.TempDir(), "env")
	base := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/ann", "USER=ann", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC",
		"SHELL=/bin/zsh", "SECRET_TOKEN=x", "GIT_DIR=/elsewhere", "WHARF_STATE_DIR=/state", "SSH_AUTH_SOCK=/agent",
		"HOME=/home/bob", // a repeat: the last value wins
	}
	b, _ := newBackend(t, modeReportEnv, local.Options{Env: base}, outEnv+"="+out)
	startSession(t, b, "alpha")
	data, err := os.ReadFile(out)
	is.NoErr(err) // the child reported its environment
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range []string{"SECRET_TOKEN", "GIT_DIR", "WHARF_STATE_DIR", "SSH_AUTH_SOCK"} {
		_, ok := env[k]
		is.True(!ok) // not inherited
	}
	is.Equal(env["HOME"], "/home/bob") // allowed, last value
	is.Equal(env["USER"], "ann")       // allowed
	is.Equal(env["LC_ALL"], "C")       // LC_* allowed
	is.Equal(env["TZ"], "UTC")         // allowed
	is.Equal(env["SHELL"], "/bin/zsh") // allowed: a workspace's shells start the user's login shell
	for k := range env {
		is.True(k == "PATH" || k == "HOME" || k == "USER" || k == "LANG" || k == "LC_ALL" || k == "TZ" || k == "SHELL" ||
			projectedVar(k) || strings.HasPrefix(k, "WHARF_TEST_") || k == "GORACE") // nothing else but the projection and the test's own settings
	}
}

// projectedVar reports whether k is a variable the credential projection
// sets in every session, lending credentials or not.
func projectedVar(k string) bool {
	switch k {
	case "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT",
		"GNUPGHOME", "GH_CONFIG_DIR", "GLAB_CONFIG_DIR":
		return true
	}
	return strings.HasPrefix(k, "GIT_CONFIG_KEY_") || strings.HasPrefix(k, "GIT_CONFIG_VALUE_")
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mode    string
		opts    local.Options
		ctx     time.Duration // a deadline on Start's ctx, when set
		want    string
		wantErr error
	}{
		{name: "exits first", mode: modeExitEarly, want: "session exited before it was ready (exit status 1)"},
		{name: "never ready", mode: modeSilent, opts: local.Options{ReadyTimeout: 300 * time.Millisecond},
			want: "session did not become ready within 300ms"},
		{name: "wrong first line", mode: modeBadLine, want: "session failed its readiness handshake"},
		{name: "caller's deadline", mode: modeSilent, ctx: 300 * time.Millisecond,
			want: "session did not become ready in time", wantErr: context.DeadlineExceeded},
		{name: "no such command", opts: local.Options{Command: []string{"/nonexistent/wharf"}},
			want: "session could not be started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			runDir := filepath.Join(t.TempDir(), "run")
			tc.opts.RuntimeDir = runDir
			b, logs := newBackend(t, tc.mode, tc.opts)
			var mu sync.Mutex
			var pids []int
			b.OnSpawn(func(pid int) { mu.Lock(); pids = append(pids, pid); mu.Unlock() })
			ctx := testContext(t)
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			rs, err := b.Start(ctx, hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()})
			is.True(rs == nil)                                       // no session
			is.Equal(hub.MessageOf(err), tc.want)                    // the public reason
			is.Equal(hub.KindOf(err), hub.Internal)                  // reported as a start failure
			is.True(!strings.Contains(err.Error(), secretOutput))    // never the child's output
			is.True(tc.wantErr == nil || errors.Is(err, tc.wantErr)) // with its cause
			is.Equal(b.Live(), int64(0))                             // nothing left running
			mu.Lock()
			for _, pid := range pids {
				is.True(procGone(pid)) // every child reaped
			}
			mu.Unlock()
			if tc.mode == modeExitEarly {
				is.True(strings.Contains(logs.String(), secretOutput)) // the child's stderr went to the log
			}
			entries, err := os.ReadDir(runDir)
			is.NoErr(err)
			is.Equal(len(entries), 0) // no socket left behind
		})
	}
}

func TestStartWhileRunning(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	b, _ := newBackend(t, modeServe, local.Options{})
	rs := startSession(t, b, "alpha")
	_, err := b.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir()})
	is.Equal(hub.KindOf(err), hub.Conflict) // one session per workspace
	_, err = rs.Facts(testContext(t))
	is.NoErr(err) // the running one is untouched
}

// TestNoDescriptorLeak is not parallel: it counts the process's open
// descriptors, which other tests would change.
func TestNoDescriptorLeak(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	is := is.New(t)
	b, _ := newBackend(t, modeServe, local.Options{})
	dir := t.TempDir()
	cycle := func() {
		ctx := testContext(t)
		rs, err := b.Start(ctx, hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir})
		is.NoErr(err) // start
		_, err = rs.Facts(ctx)
		is.NoErr(err) // facts
		c, err := rs.Dial(ctx)
		is.NoErr(err) // dial
		c.Close()
		is.NoErr(rs.Stop(ctx)) // stop
	}
	cycle() // the first start initializes what the runtime keeps open
	before := openFDs(t)
	for range 20 {
		cycle()
	}
	is.Equal(openFDs(t), before) // every descriptor of 20 sessions was closed
}

func openFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
