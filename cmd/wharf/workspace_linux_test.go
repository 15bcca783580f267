package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// TestWorkspaceEndToEnd drives the workspace family through a real daemon
// process: registration of a real git folder, a real session child
// reached through the Hub's proxy, stop (the child is reaped), start, a
// graceful shutdown that stops the child, and a restart that brings the
// workspace back because it was running when the Hub stopped.
func TestWorkspaceEndToEnd(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	home, dir := t.TempDir(), stateDir(t)
	repo := filepath.Join(t.TempDir(), "project")
	is.NoErr(os.Mkdir(repo, 0o755)) // the workspace folder
	gitInit(t, repo, home)
	repo = canonical(t, repo)
	c := newClient(t, nil)

	h := startHub(ctx, t, dir, home)
	_, token := loginFirstUser(ctx, t, c, h)

	var reg struct {
		ID      string `json:"id"`
		Running bool   `json:"running"`
	}
	status, body := postJSON(ctx, t, c, h.url+"api/hub/workspaces", token,
		map[string]any{"path": repo, "start": true}, &reg)
	is.Equal(status, http.StatusOK) // the folder is registered and started
	is.True(reg.ID != "")           // under a new id
	is.True(reg.Running)            // and runs
	id := reg.ID
	t.Logf("registered %s: %s", id, body)

	st := hubState(ctx, t, c, h.url, token)
	is.Equal(len(st.Workspaces), 1) // the state lists the workspace
	w := st.Workspaces[0]
	is.Equal(w.ID, id)                    // by its id
	is.Equal(w.Path, repo)                // at its canonical path
	is.True(w.Running)                    // running
	is.Equal(w.Branch, "main")            // with the branch git reports
	is.Equal(w.WorkspaceAPIRevision, 24)  // and the child's workspace revision
	is.Equal(st.WorkspaceAPIRevision, 24) // the Hub's too

	info := workspaceSessionInfo(ctx, t, c, h.url, token, id)
	is.Equal(info.status, http.StatusOK) // the Hub forwards /s/{id}/ to the child
	is.Equal(info.WorkspaceID, id)       // which answers for its workspace
	is.Equal(info.Revision, 24)          // at revision 24

	daemon := h.cmd.Process.Pid
	first := workspaceSessionChildren(t, daemon, id)
	is.Equal(len(first), 1) // one session child runs, a child of the daemon

	var stop struct {
		Running    bool  `json:"running"`
		WasRunning *bool `json:"wasRunning"`
	}
	status, body = postJSON(ctx, t, c, h.url+"api/hub/sessions/"+id+"/stop", token, nil, &stop)
	is.Equal(status, http.StatusOK)                                                                   // stop succeeds
	is.True(!stop.Running)                                                                            // the workspace is stopped
	is.True(stop.WasRunning != nil && *stop.WasRunning)                                               // after running
	is.True(!isChildOf(first[0], daemon))                                                             // the child is gone, reaped: no zombie
	is.True(!hubState(ctx, t, c, h.url, token).Workspaces[0].Running)                                 // the state says stopped
	is.Equal(workspaceSessionInfo(ctx, t, c, h.url, token, id).status, http.StatusServiceUnavailable) // nothing to forward to
	t.Logf("stopped: %s", body)

	status, body = postJSON(ctx, t, c, h.url+"api/hub/sessions/"+id+"/start", token, nil, &reg)
	is.Equal(status, http.StatusOK) // start again
	is.True(reg.Running)            // it runs
	second := workspaceSessionChildren(t, daemon, id)
	is.Equal(len(second), 1) // in a new child
	t.Logf("started: %s", body)

	is.NoErr(h.cmd.Process.Signal(syscall.SIGTERM))                   // stop the Hub gracefully
	is.NoErr(h.wait(ctx))                                             // it exits 0
	is.True(!workspaceSessionAlive(second[0], id))                    // taking its session child along
	is.True(!strings.Contains(h.stderr.String(), "ended on its own")) // as a stop, not a crash

	h2 := startHub(ctx, t, dir, home)
	st = hubState(ctx, t, c, h2.url, token)                                            // the device session survives the restart
	is.Equal(len(st.Workspaces), 1)                                                    // the workspace is still registered
	is.True(st.Workspaces[0].Running)                                                  // and runs again: it was running when the Hub stopped
	is.Equal(len(workspaceSessionChildren(t, h2.cmd.Process.Pid, id)), 1)              // in a child of the new Hub
	is.Equal(workspaceSessionInfo(ctx, t, c, h2.url, token, id).status, http.StatusOK) // which answers

	status, _ = postJSON(ctx, t, c, h2.url+"api/hub/workspaces/"+id+"/forget", token, nil, nil)
	is.Equal(status, http.StatusConflict) // a running workspace is not forgotten
	status, _ = postJSON(ctx, t, c, h2.url+"api/hub/sessions/"+id+"/stop", token, nil, nil)
	is.Equal(status, http.StatusOK) // stop it
	var forget struct {
		Forgotten bool `json:"forgotten"`
	}
	status, _ = postJSON(ctx, t, c, h2.url+"api/hub/workspaces/"+id+"/forget", token, nil, &forget)
	is.Equal(status, http.StatusOK)                                 // then forget it
	is.True(forget.Forgotten)                                       // it is forgotten
	is.Equal(len(hubState(ctx, t, c, h2.url, token).Workspaces), 0) // the registry is empty
	is.True(isDir(filepath.Join(repo, ".git")))                     // and the folder is kept
	is.NoErr(h2.cmd.Process.Signal(syscall.SIGTERM))                // stop the second Hub
	is.NoErr(h2.wait(ctx))                                          // it exits 0
}

// TestWorkspaceHubKilled: when the Hub dies with SIGKILL, its running
// session child notices (stdin reaches EOF), ends cleanly and removes its
// socket; the next Hub starts the workspace again, since nothing recorded
// it as stopped.
func TestWorkspaceHubKilled(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	home, dir := t.TempDir(), stateDir(t)
	repo := filepath.Join(t.TempDir(), "project")
	is.NoErr(os.Mkdir(repo, 0o755)) // the workspace folder
	gitInit(t, repo, home)
	c := newClient(t, nil)

	h := startHub(ctx, t, dir, home)
	_, token := loginFirstUser(ctx, t, c, h)
	var reg struct {
		ID string `json:"id"`
	}
	status, _ := postJSON(ctx, t, c, h.url+"api/hub/workspaces", token, map[string]any{"path": repo}, &reg)
	is.Equal(status, http.StatusOK) // registered and, by default, started
	pids := workspaceSessionChildren(t, h.cmd.Process.Pid, reg.ID)
	is.Equal(len(pids), 1) // one session child
	exited, err := processExit(pids[0])
	is.NoErr(err) // the child can be watched

	is.NoErr(h.cmd.Process.Kill()) // kill -9 the Hub
	is.True(h.wait(ctx) != nil)    // it died
	select {
	case err := <-exited:
		is.NoErr(err) // the orphaned child ended on its own
	case <-ctx.Done():
		t.Fatalf("the session child outlived its Hub: %v", ctx.Err())
	}
	socks, err := filepath.Glob(filepath.Join(dir, "sessions", "*.sock"))
	is.NoErr(err)           // the runtime directory is readable
	is.Equal(len(socks), 0) // the orphaned child shut down gracefully and removed its socket

	h2 := startHub(ctx, t, dir, home)
	st := hubState(ctx, t, c, h2.url, token)
	is.Equal(len(st.Workspaces), 1)                                                        // still registered
	is.True(st.Workspaces[0].Running)                                                      // and running again
	is.Equal(workspaceSessionInfo(ctx, t, c, h2.url, token, reg.ID).status, http.StatusOK) // its new child answers
	is.NoErr(h2.cmd.Process.Signal(syscall.SIGTERM))                                       // stop the second Hub
	is.NoErr(h2.wait(ctx))                                                                 // it exits 0
}

// processExit watches pid, which need not be our child, through a pidfd:
// the channel yields nil once the process has ended, or the poll's error.
func processExit(pid int) (<-chan error, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		defer unix.Close(fd)
		for {
			// A pidfd polls readable once its process has terminated; -1
			// waits without a bound, which the test's own deadline gives.
			_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			done <- err
			return
		}
	}()
	return done, nil
}

// infoResult is GET /s/{id}/api/session as the child answers it.
type infoResult struct {
	status      int
	WorkspaceID string `json:"workspaceId"`
	Revision    int    `json:"workspaceApiRevision"`
}

// workspaceSessionInfo asks a workspace's child, through the Hub, who it is.
func workspaceSessionInfo(ctx context.Context, t *testing.T, c *http.Client, base, token, id string) infoResult {
	t.Helper()
	resp, body := call(ctx, t, c, "GET", base+"s/"+id+"/api/session", token, nil)
	res := infoResult{status: resp.StatusCode}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &res); err != nil {
			t.Fatalf("session info %q: %v", body, err)
		}
	}
	return res
}

// workspaceSessionChildren lists the live processes that are children of parent
// and run `session --workspace-id id`. A zombie has lost its command line,
// so it is not listed; isChildOf is what catches one.
func workspaceSessionChildren(t *testing.T, parent int, id string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !isChildOf(pid, parent) {
			continue
		}
		if workspaceSessionAlive(pid, id) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// isChildOf reports whether pid is a child of parent, running or a zombie:
// a child the parent has not reaped yet still has its /proc entry.
func isChildOf(pid, parent int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // gone, and reaped
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return false
	}
	ppid, err := strconv.Atoi(fields[1])
	return err == nil && ppid == parent
}

// workspaceSessionAlive reports whether pid runs `session --workspace-id id`. A
// zombie has no command line, and a reused pid runs something else.
func workspaceSessionAlive(pid int, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	i := slices.Index(args, "--workspace-id")
	return len(args) > 1 && args[1] == "session" && i > 0 && i+1 < len(args) && args[i+1] == id
}

// TestStateIsPrivateUnderUmask000: even started with umask 000, every
// directory of the state is 0700 and every file and socket 0600, with a
// workspace session running (its socket exists) and a commit made.
func TestStateIsPrivateUnderUmask000(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx := testContext(t)
	home, dir := t.TempDir(), stateDir(t)
	repo := filepath.Join(t.TempDir(), "project")
	is.NoErr(os.Mkdir(repo, 0o755))
	gitInit(t, repo, home)
	c := newClient(t, nil)
	h := startHub(ctx, t, dir, home, "WHARF_TEST_UMASK_000=1")
	_, token := loginFirstUser(ctx, t, c, h)
	status, _ := postJSON(ctx, t, c, h.url+"api/hub/workspaces", token, map[string]any{"path": repo, "start": true}, nil)
	is.Equal(status, http.StatusOK) // a workspace runs

	sockets := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		mode := fi.Mode()
		switch {
		case mode.IsDir():
			is.Equal(mode.Perm(), os.FileMode(0o700)) // a private directory
		case mode&os.ModeSocket != 0:
			sockets++
			is.Equal(mode.Perm(), os.FileMode(0o600)) // a private socket
		case mode.Perm() == 0o700 && daemontest.SessionScript(p):
			// a session's own script (its git, its gpg program): private and executable
		default:
			is.Equal(mode.Perm(), os.FileMode(0o600)) // a private file
		}
		return nil
	})
	is.NoErr(err)        // the whole state directory was read
	is.Equal(sockets, 1) // the running workspace's socket was among them
}
