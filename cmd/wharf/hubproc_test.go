package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// The end-to-end tests run the test binary as a real `wharf serve`, which
// in turn starts workspace sessions as `<its own executable> session ...`:
// the test binary again. The local backend gives a session a sanitized
// environment without any WHARF_* variable, so WHARF_TEST_MAIN (see
// TestMain) never reaches it. This init therefore recognizes the session
// command line itself: `go test` never passes "session" as the binary's
// first argument, only -test.* flags. init runs before TestMain, so the
// session runs exactly as in the real binary and the test framework never
// starts.
//
// The same init installs the crash hooks of rename_crash_test.go when the
// daemon child is started with WHARF_TEST_CRASH.
func init() {
	if len(os.Args) > 1 && os.Args[1] == "session" {
		main()
		os.Exit(0)
	}
	if mode := os.Getenv(crashEnv); mode != "" {
		installCrash(mode)
	}
}

// crashEnv names the variable that makes a daemon child crash on purpose:
// crashBeforeRename or crashAfterRename.
const crashEnv = "WHARF_TEST_CRASH"

const (
	crashBeforeRename = "rename-before" // SIGKILL just before the folder rename
	crashAfterRename  = "rename-after"  // SIGKILL just after it, before the registry follows
)

// installCrash sets testFS to a file system that kills the process at the
// point mode names. An unknown mode is a broken test: the child refuses
// to run at all rather than run without its hook.
func installCrash(mode string) {
	switch mode {
	case crashBeforeRename, crashAfterRename:
	default:
		os.Stderr.WriteString("unknown " + crashEnv + " mode " + mode + "\n")
		os.Exit(3)
	}
	testFS = func(fsys hub.FS) hub.FS { return crashFS{FS: fsys, after: mode == crashAfterRename} }
}

// crashFS is the real file system whose RenameNoReplace kills the whole
// process with SIGKILL, the way a power cut or the OOM killer would: no
// deferred call, no database close, no reply to the client.
type crashFS struct {
	hub.FS
	after bool // rename first, then die
}

// RenameNoReplace dies before or after the real rename; it never returns.
func (c crashFS) RenameNoReplace(oldpath, newpath string) error {
	if c.after {
		if err := c.FS.RenameNoReplace(oldpath, newpath); err != nil {
			// A failed rename is not the crash the test asked for; say so
			// and die anyway, so the test's disk check reports it.
			os.Stderr.WriteString("crash hook: the rename failed: " + err.Error() + "\n")
		}
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL cannot be caught; nothing runs after it
}

// startHub starts `wharf serve` as startChild does, with HOME set to home
// (so neither the Hub's git nor its sessions read the user's
// configuration) and env added last.
func startHub(ctx context.Context, t *testing.T, dir, home string, env ...string) *serveProc {
	t.Helper()
	return startChild(ctx, t, dir, append([]string{"HOME=" + home, "GORACE=atexit_sleep_ms=0"}, env...)...)
}

// loginFirstUser reads the first-user banner of a fresh hub and logs in
// with it; it returns the password and the bearer token.
func loginFirstUser(ctx context.Context, t *testing.T, c *http.Client, h *serveProc) (password, token string) {
	t.Helper()
	is := is.New(t)
	banner, err := h.stderr.waitFor(ctx, bannerRE.MatchString)
	is.NoErr(err) // the hub printed the first user's password
	_, password, _ = firstPassword(banner)
	resp, s := login(ctx, t, c, h.url, "ann", password)
	is.Equal(resp.StatusCode, http.StatusOK) // the first user logs in
	return password, s.SessionID
}

// stateView is the part of GET /api/hub/state these tests read.
type stateView struct {
	WorkspaceAPIRevision int             `json:"workspaceApiRevision"`
	Workspaces           []workspaceView `json:"workspaces"`
}

// workspaceView is one workspace of stateView.
type workspaceView struct {
	ID                   string `json:"id"`
	Path                 string `json:"path"`
	Running              bool   `json:"running"`
	Branch               string `json:"branch"`
	Availability         string `json:"availability"`
	WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
}

// hubState reads GET /api/hub/state, failing the test on anything but 200.
func hubState(ctx context.Context, t *testing.T, c *http.Client, base, token string) stateView {
	t.Helper()
	resp, body := call(ctx, t, c, "GET", base+"api/hub/state", token, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/hub/state: %s %s", resp.Status, body)
	}
	var st stateView
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("state %q: %v", body, err)
	}
	return st
}

// postJSON is call for a POST whose answer is decoded into out when the
// status is 200; it returns the status and the raw body.
func postJSON(ctx context.Context, t *testing.T, c *http.Client, u, token string, in, out any) (int, string) {
	t.Helper()
	resp, body := call(ctx, t, c, "POST", u, token, in)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("POST %s: body %q: %v", u, body, err)
		}
	}
	return resp.StatusCode, string(body)
}

// tryPost sends a POST with a JSON body and returns the transport's error,
// if any: what a client sees when the Hub dies while answering.
func tryPost(ctx context.Context, c *http.Client, u, token string, in any) (int, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", u, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// gitInit runs a real `git init` in dir with the initial branch main and a
// configuration isolated from the machine's (home's, empty).
func gitInit(t *testing.T, dir, home string) {
	t.Helper()
	cmd := exec.Command("git", "init", "--quiet", "--initial-branch=main", dir)
	cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}

// canonical returns dir with its symbolic links resolved, as the Hub
// stores paths.
func canonical(t *testing.T, dir string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// isDir reports whether a directory is at p.
func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}
