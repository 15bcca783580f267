package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

// TestSessionCommand runs `wharf session` as a real process, the way the
// local backend does, and ends it both ways the protocol allows.
func TestSessionCommand(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		stop func(cmd *exec.Cmd, stdin *os.File) error
	}{
		{"SIGTERM", func(cmd *exec.Cmd, _ *os.File) error { return cmd.Process.Signal(syscall.SIGTERM) }},
		{"stdin closed", func(_ *exec.Cmd, stdin *os.File) error { return stdin.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			ctx := testContext(t)
			dir := t.TempDir()
			sock := filepath.Join(dir, "s.sock")
			cmd := exec.CommandContext(ctx, exe, "session", "--workspace-id", "alpha", "--path", dir, "--socket", sock)
			cmd.Env = append(os.Environ(), "WHARF_TEST_MAIN=1", "GORACE=atexit_sleep_ms=0")
			stdinR, stdinW, err := os.Pipe()
			is.NoErr(err)
			defer stdinW.Close()
			stdout, stderr := newOutput(), newOutput()
			cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdout, stderr
			is.NoErr(cmd.Start())
			stdinR.Close()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()

			select {
			case line := <-stdout.firstLine:
				is.Equal(line, "ready") // the readiness line
			case err := <-exited:
				t.Fatalf("session exited before it was ready: %v\n%s", err, stderr)
			case <-ctx.Done():
				t.Fatalf("no readiness line: %v\n%s", ctx.Err(), stderr)
			}

			tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return new(net.Dialer).DialContext(ctx, "unix", sock)
			}}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://session/_wharf/facts", nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			is.NoErr(err) // the socket answers
			var facts struct {
				WorkspaceAPIRevision int `json:"workspaceApiRevision"`
			}
			is.NoErr(json.NewDecoder(resp.Body).Decode(&facts))
			resp.Body.Close()
			is.Equal(facts.WorkspaceAPIRevision, 24) // at revision 24
			tr.CloseIdleConnections()

			is.NoErr(tc.stop(cmd, stdinW)) // end it
			select {
			case err := <-exited:
				is.NoErr(err) // exit status 0
			case <-ctx.Done():
				t.Fatalf("session did not exit: %v\n%s", ctx.Err(), stderr)
			}
			_, err = os.Lstat(sock)
			is.True(errors.Is(err, os.ErrNotExist)) // the socket is removed
		})
	}
}

// TestSessionCommandStatus checks the exit statuses of a session that
// cannot start: 2 for a bad command line, 1 for a missing folder.
func TestSessionCommandStatus(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no flags", []string{"session"}, 2},
		{"missing folder", []string{"session", "--workspace-id", "a", "--path", filepath.Join(dir, "none"),
			"--socket", filepath.Join(dir, "s.sock")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			cmd := exec.CommandContext(testContext(t), exe, tc.args...)
			cmd.Env = append(os.Environ(), "WHARF_TEST_MAIN=1", "GORACE=atexit_sleep_ms=0")
			out, err := cmd.Output()
			var ee *exec.ExitError
			is.True(errors.As(err, &ee))     // the command failed
			is.Equal(ee.ExitCode(), tc.want) // with its status
			is.Equal(string(out), "")        // and never said ready
		})
	}
}
