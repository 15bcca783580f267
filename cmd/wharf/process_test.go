package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/statedir"
)

// serveProc is `wharf serve` running as a real child process: the test binary
// re-executed with WHARF_TEST_MAIN=1 (see TestMain).
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *output
	exited chan error // holds cmd.Wait's result once the child has exited
}

// startChild starts the child on dir, with env added to its environment
// last, and waits for its URL line. The child is killed at the end of the
// test if it is still running.
func startChild(ctx context.Context, t *testing.T, dir string, env ...string) *serveProc {
	t.Helper()
	return startChildArgs(ctx, t, dir, nil, env...)
}

// startChildArgs is startChild with more flags for serve.
func startChildArgs(ctx context.Context, t *testing.T, dir string, args []string, env ...string) *serveProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, append([]string{"serve", "--listen", "127.0.0.1:0", "--state-dir", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), "WHARF_TEST_MAIN=1", "USER=ann"), env...)
	stdout := newOutput()
	c := &serveProc{cmd: cmd, stderr: newOutput(), exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = stdout, c.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		c.wait(context.Background())
	})
	select {
	case c.url = <-stdout.firstLine:
	case err := <-c.exited:
		c.exited <- err
		t.Fatalf("child exited before serving: %v\n%s", err, c.stderr)
	case <-ctx.Done():
		t.Fatalf("child did not print its URL: %v\n%s", ctx.Err(), c.stderr)
	}
	return c
}

// wait returns the child's exit error once it has exited.
func (c *serveProc) wait(ctx context.Context) error {
	select {
	case err := <-c.exited:
		c.exited <- err
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestChildProcess(t *testing.T) {
	t.Parallel()
	t.Run("SIGKILL releases the lock", func(t *testing.T) {
		is := is.New(t)
		ctx := testContext(t)
		dir := stateDir(t)
		c := startChild(ctx, t, dir)
		// stderr is a separate pipe: the banner may arrive after the URL.
		banner, err := c.stderr.waitFor(ctx, bannerRE.MatchString)
		is.NoErr(err) // the child created the first user
		_, password, _ := firstPassword(banner)

		_, err = tryServe(ctx, nil, dir)
		is.True(errors.Is(err, statedir.ErrLocked))                                      // the lock holds across processes
		is.True(strings.Contains(err.Error(), fmt.Sprintf("pid %d", c.cmd.Process.Pid))) // naming the child

		is.NoErr(c.cmd.Process.Signal(syscall.SIGKILL)) // kill -9 the child
		err = c.wait(ctx)
		var ee *exec.ExitError
		is.True(errors.As(err, &ee))                                      // the child died
		is.Equal(ee.Sys().(syscall.WaitStatus).Signal(), syscall.SIGKILL) // of SIGKILL
		_, err = os.Stat(filepath.Join(dir, "wharf.db-wal"))
		is.NoErr(err) // without closing its database

		d := startServe(ctx, t, map[string]string{"USER": "ann"}, dir)
		is.True(!strings.Contains(d.stderr.String(), "created the first user")) // the new serve reuses the state
		resp, _ := login(ctx, t, newClient(t, nil), d.url, "ann", password)
		is.Equal(resp.StatusCode, http.StatusOK) // the first user's password still logs in
		is.NoErr(d.stop())                       // and the new serve stops cleanly
	})

	t.Run("SIGTERM shuts down gracefully", func(t *testing.T) {
		is := is.New(t)
		ctx := testContext(t)
		dir := stateDir(t)
		c := startChild(ctx, t, dir)
		is.NoErr(c.cmd.Process.Signal(syscall.SIGTERM))               // ask the child to stop
		is.NoErr(c.wait(ctx))                                         // the child exits 0
		is.True(strings.Contains(c.stderr.String(), "shutting down")) // after saying so
		_, err := os.Stat(filepath.Join(dir, "wharf.db-wal"))
		is.True(errors.Is(err, os.ErrNotExist)) // the database was closed (SQLite removes the WAL on a clean close)
	})
}

// TestExitStatus runs the real binary: 0 for success and help, 2 for a
// mistake on the command line, 1 for any other failure.
func TestExitStatus(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := stateDir(t)
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"version", []string{"version"}, 0},
		{"help of serve", []string{"serve", "-h"}, 0},
		{"no command", nil, 2},
		{"unknown flag", []string{"serve", "--bogus"}, 2},
		{"plain HTTP off loopback", []string{"serve", "--listen", "0.0.0.0:0", "--state-dir", dir}, 2},
		{"unknown user", []string{"user", "remove", "nobody", "--state-dir", dir}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			cmd := exec.CommandContext(ctx, exe, tc.args...)
			cmd.Env = append(os.Environ(), "WHARF_TEST_MAIN=1")
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else {
				is.NoErr(err) // the process ran
			}
			is.Equal(code, tc.want) // exit status
		})
	}
}
