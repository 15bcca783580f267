package child_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	h := child.NewHandler("alpha", child.HandlerOptions{})
	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string
	}{
		{"facts", "GET", "/_wharf/facts", 200, `{"workspaceApiRevision":24,"shells":[]}`},
		{"session info", "GET", "/s/alpha/api/session", 200, `{"workspaceId":"alpha","workspaceApiRevision":24}`},
		{"another workspace", "GET", "/s/beta/api/session", 404, `{"error":"not found"}`},
		{"unknown path", "GET", "/s/alpha/api/nope", 404, `{"error":"not found"}`},
		{"root", "GET", "/", 404, `{"error":"not found"}`},
		{"unclean path is not redirected", "GET", "/s/alpha//api/session", 404, `{"error":"not found"}`},
		{"POST facts", "POST", "/_wharf/facts", 404, `{"error":"not found"}`},
		{"HEAD session", "HEAD", "/s/alpha/api/session", 404, `{"error":"not found"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			is.Equal(rec.Code, tc.status)                                  // status
			is.Equal(strings.TrimSpace(rec.Body.String()), tc.body)        // body
			is.Equal(rec.Header().Get("Cache-Control"), "no-store")        // never cached
			is.Equal(rec.Header().Get("Content-Type"), "application/json") // always JSON
		})
	}
}

// inProcess is Main running in-process on a workspace folder and a socket.
type inProcess struct {
	socket string
	stdin  *io.PipeWriter
	stderr *strings.Builder
	done   chan error
	cancel context.CancelFunc
}

// startChild runs Main and waits for its readiness line. Main changes the
// working directory, so the test restores it (and cannot be parallel).
func startChild(t *testing.T, id string, extra ...string) *inProcess {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	ctx, cancel := context.WithCancel(t.Context())
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	c := &inProcess{socket: filepath.Join(dir, "s.sock"), stdin: stdinW, stderr: new(strings.Builder),
		done: make(chan error, 1), cancel: cancel}
	args := append([]string{"--workspace-id", id, "--path", dir, "--socket", c.socket}, extra...)
	go func() {
		c.done <- child.Main(ctx, args, stdinR, stdoutW, c.stderr)
		stdoutW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		stdinW.Close()
		c.wait(t)
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdoutR).ReadString('\n')
		line <- s
		io.Copy(io.Discard, stdoutR)
	}()
	select {
	case s := <-line:
		if s != "ready\n" {
			t.Fatalf("first line %q, want ready", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no readiness line within 10s")
	}
	return c
}

// wait returns Main's result, failing the test when it takes too long.
func (c *inProcess) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Main did not return within 10s")
		return nil
	}
}

// get calls the child over its socket and decodes the JSON answer.
func (c *inProcess) get(t *testing.T, path string, v any) int {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, "unix", c.socket)
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://session"+path, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func TestMainServesAndStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(c *inProcess)
	}{
		{"terminated", func(c *inProcess) { c.cancel() }},
		{"stdin closed", func(c *inProcess) { c.stdin.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			c := startChild(t, "alpha")
			fi, err := os.Lstat(c.socket)
			is.NoErr(err)                                  // the socket exists once ready
			is.Equal(fi.Mode().Perm(), fs.FileMode(0o600)) // private socket
			wd, err := os.Getwd()
			is.NoErr(err)
			is.Equal(wd, filepath.Dir(c.socket)) // the child works in its folder

			var facts childproto.Facts
			is.Equal(c.get(t, childproto.FactsPath, &facts), 200)  // facts answer
			is.Equal(facts.WorkspaceAPIRevision, 24)               // at revision 24
			is.True(facts.Shells != nil && len(facts.Shells) == 0) // with an empty shell list
			var info child.Info
			is.Equal(c.get(t, "/s/alpha/api/session", &info), 200) // the forwarded endpoint answers
			is.Equal(info.WorkspaceID, "alpha")                    // for its workspace

			tc.stop(c)
			is.NoErr(c.wait(t)) // a clean stop
			_, err = os.Lstat(c.socket)
			is.True(errors.Is(err, fs.ErrNotExist))                  // the socket is gone
			is.True(strings.Contains(c.stderr.String(), "stopping")) // the child says why it stops
		})
	}
}

func TestMainReplacesStaleSocket(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	is.NoErr(err)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // leaves a stale socket file, as a killed child does
	_, err = os.Lstat(sock)
	is.NoErr(err) // the stale socket is there

	t.Chdir(dir)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- child.Main(ctx, []string{"--workspace-id", "a", "--path", dir, "--socket", sock}, nil, stdoutW, io.Discard)
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdoutR).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		is.Equal(s, "ready\n") // ready despite the stale socket
	case err := <-done:
		t.Fatalf("Main returned early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no readiness within 10s")
	}
	cancel()
	select {
	case err := <-done:
		is.NoErr(err) // clean stop
	case <-time.After(10 * time.Second):
		t.Fatal("Main did not return within 10s")
	}
}

func TestMainFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no flags", nil, true, "required"},
		{"missing socket", []string{"--workspace-id", "a", "--path", dir}, true, "required"},
		{"extra argument", []string{"--workspace-id", "a", "--path", dir, "--socket", "s", "x"}, true, "unexpected"},
		{"unknown flag", []string{"--bogus"}, true, "bogus"},
		{"missing folder", []string{"--workspace-id", "a", "--path", filepath.Join(dir, "none"), "--socket", "s"}, false, "workspace folder"},
		{"folder is a file", []string{"--workspace-id", "a", "--path", file, "--socket", "s"}, false, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var stdout strings.Builder
			err := child.Main(t.Context(), tc.args, nil, &stdout, io.Discard)
			is.True(err != nil)                                // refused
			is.Equal(errors.Is(err, child.ErrUsage), tc.usage) // usage errors are marked
			is.True(strings.Contains(err.Error(), tc.want))    // saying why
			is.Equal(stdout.String(), "")                      // never ready
		})
	}

	t.Run("help", func(t *testing.T) {
		is := is.New(t)
		err := child.Main(t.Context(), []string{"-h"}, nil, io.Discard, io.Discard)
		is.True(errors.Is(err, flag.ErrHelp)) // help is not a usage error
	})
}

// TestMainKeepsOtherFiles is not parallel: Main enters the folder first.
func TestMainKeepsOtherFiles(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	t.Chdir(dir)
	file := filepath.Join(dir, "file")
	is.NoErr(os.WriteFile(file, []byte("x"), 0o600))
	err := child.Main(t.Context(), []string{"--workspace-id", "a", "--path", dir, "--socket", file}, nil, io.Discard, io.Discard)
	is.True(err != nil && strings.Contains(err.Error(), "not a socket")) // a file in the socket's place is refused
	b, err := os.ReadFile(file)
	is.NoErr(err)
	is.Equal(string(b), "x") // and kept
}

func TestMainLeavesAnotherChildsSocket(t *testing.T) {
	is := is.New(t)
	c := startChild(t, "alpha")
	// A later child of the same workspace replaced the socket (this one
	// outlived its Hub): stopping must not delete the newcomer's socket.
	is.NoErr(os.Remove(c.socket))
	ln, err := net.Listen("unix", c.socket)
	is.NoErr(err) // the newcomer listens at the same path
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	defer ln.Close()
	c.cancel()
	is.NoErr(c.wait(t)) // a clean stop
	_, err = os.Lstat(c.socket)
	is.NoErr(err) // the newcomer's socket is still there
}
