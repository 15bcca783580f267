package daemon_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// TestAWorkspaceLivesOnAnotherMachine drives the real `wharf serve` with
// a host behind a real sshd on loopback (its sessions' HOME a folder of
// the test's): the host is added after its test; a folder on it is browsed, registered (git init there) and
// started, the binary copied there; the session answers through the forward; a stop leaves no
// socket there; the host cannot be removed while the workspace lives
// there, and can once it is forgotten. A conversation with the scripted
// agent runs there, its turn seen on the live stream. The Hub restarts
// meanwhile, and the next one adopts the session, which ran on. Its
// folder is renamed there, a worktree made and deleted there, its remote
// fetched there lent its token, and a clone job clones beside it there.
func TestAWorkspaceLivesOnAnotherMachine(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "wssh") // short: sockets live below it
	is.NoErr(err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	remote := filepath.Join(tmp, "rh")
	is.NoErr(os.MkdirAll(filepath.Join(remote, "src", "app"), 0o755))
	sshd := sshdtest.StartHome(t, remote)
	client := sshd.NewClient(t, tmp, "")

	agentDir := filepath.Join(tmp, "ag")
	is.NoErr(os.MkdirAll(agentDir, 0o755))
	agent := filepath.Join(agentDir, "acpagent")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", agent, "github.com/wharfhub/wharf/fakes/acpagent").CombinedOutput()
	if err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: filepath.Join(tmp, "st"),
		Args: []string{"--ssh-config", client.Config,
			"--agent", `scripted=["` + agent + `","--state","` + filepath.Join(agentDir, "state") + `"]`}})
	is.NoErr(err)
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	pw, err := d.FirstUserPassword()
	is.NoErr(err)
	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err)
	do := func(method, path string, body any, out any) int {
		t.Helper()
		status, raw, err := c.Do(ctx, method, path, body, out)
		is.NoErr(err)
		if status >= 300 {
			t.Logf("%s %s: %d %s", method, path, status, raw)
		}
		return status
	}

	is.Equal(do("POST", "api/hub/hosts", map[string]string{"name": "build1", "destination": client.Alias}, nil), http.StatusCreated) // tested and added
	var listing struct{ Path string }
	is.Equal(do("GET", "api/hub/browse?backend=ssh:build1", nil, &listing), http.StatusOK) // browse the host
	is.Equal(listing.Path, remote)                                                         // from its login's home

	var onboard struct {
		Workspace  struct{ ID, Backend string }
		Started    bool
		StartError *string
	}
	is.Equal(do("POST", "api/hub/workspaces/configure", map[string]any{"path": filepath.Join(remote, "src", "app"),
		"backend": "ssh:build1", "displayName": "App", "init": true}, &onboard), http.StatusOK) // registered there
	_, err = os.Stat(filepath.Join(remote, "src", "app", ".git"))
	is.NoErr(err) // git init ran there
	ws := onboard.Workspace.ID

	// A token the Hub holds, lent to the workspace there.
	sec := daemontest.NewSecrets()
	token := "ghp_" + rand.Text()
	sec.Register("token value", token)
	var cred struct{ Credential struct{ ID string } }
	is.Equal(do("POST", "api/hub/credentials/token", map[string]any{"name": "github", "host": "github.com", "token": token,
		"capabilities": []string{"https-git", "github-cli"}}, &cred), http.StatusOK)
	is.Equal(do("POST", "api/hub/credentials/"+cred.Credential.ID+"/assign", map[string]any{"workspaceId": ws, "role": "authentication",
		"host": "github.com"}, nil), http.StatusOK)
	is.Equal(do("POST", "api/hub/sessions/"+ws+"/start", nil, nil), http.StatusOK) // started there
	bins, _ := filepath.Glob(filepath.Join(remote, ".cache/wharf/bin/*/wharf"))
	is.Equal(len(bins), 1) // the binary was copied there
	var environ []string
	for k, v := range remoteEnv(t, remote) {
		environ = append(environ, k+"="+v)
	}
	fill := exec.CommandContext(ctx, "sh", "-c", "git credential fill")
	fill.Env, fill.Dir = environ, filepath.Join(remote, "src", "app") // as the session's shell there runs it
	fill.Stdin = strings.NewReader("protocol=https\nhost=github.com\n\n")
	answer, err := fill.CombinedOutput()
	is.NoErr(err)                                                     // git there asks the Hub, through the forwarded socket
	is.True(strings.Contains(string(answer), "password="+token+"\n")) // and is answered with the lent token
	_, err = sec.ScanStateDir(filepath.Join(remote, ".cache/wharf"), "on the host, while the session runs")
	is.NoErr(err)                                                       // and no file there holds it
	is.Equal(do("GET", "s/"+ws+"/api/shells", nil, nil), http.StatusOK) // the session answers through the forward

	// A conversation with the scripted agent, which runs there.
	resp, err := c.Request(ctx, "GET", "api/hub/live?ws="+ws+"&activity=1", nil)
	is.NoErr(err) // the live stream
	defer resp.Body.Close()
	events := daemontest.ReadSSE(resp.Body)
	var conv struct{ Conversation struct{ ID string } }
	is.Equal(do("POST", "s/"+ws+"/api/chat/conversations", map[string]any{"agent": "scripted"}, &conv), http.StatusCreated) // a conversation there
	cid := url.PathEscape(conv.Conversation.ID)
	is.Equal(do("POST", "s/"+ws+"/api/chat/conversations/"+cid+"/messages", map[string]any{"text": agentscript.Stream}, nil), http.StatusAccepted) // a message
	_, err = events.Until(ctx, func(e daemontest.Event) bool { return strings.Contains(e.Data, `"finished":true`) })
	is.NoErr(err) // the turn finished, seen on the live stream through the forward
	var snap struct{ Items []struct{ Kind string } }
	is.Equal(do("GET", "s/"+ws+"/api/chat/conversations/"+cid, nil, &snap), http.StatusOK)
	answered := false
	for _, it := range snap.Items {
		answered = answered || it.Kind == "assistant_message"
	}
	is.True(answered) // the agent answered
	resp.Body.Close()

	// The Hub restarts: its session there runs on and is adopted.
	running := remoteProcesses(t, remote, " session ")
	is.True(running != "") // the session's process there
	is.NoErr(d.Stop(ctx))  // the Hub stops
	logs := d.Stderr()
	is.Equal(remoteProcesses(t, remote, " session "), running) // the session runs on
	d, err = d.Restart(ctx)
	is.NoErr(err)
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	c, _, err = daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err)
	is.NoErr(d.WaitLog(ctx, "adopted a session an earlier Hub left running"))              // the next Hub adopts it
	is.Equal(remoteProcesses(t, remote, " session "), running)                             // the same process
	is.Equal(do("GET", "s/"+ws+"/api/chat/conversations/"+cid, nil, &snap), http.StatusOK) // with its conversation, through a new forward

	// The Hub is killed (SIGKILL: no detach, its ssh master and clients
	// left behind): the next one adopts the session all the same.
	is.NoErr(d.Kill())
	logs += d.Stderr()
	is.Equal(remoteProcesses(t, remote, " session "), running) // the session runs on
	d, err = d.Restart(ctx)
	is.NoErr(err)
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	c, _, err = daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err)
	is.NoErr(d.WaitLog(ctx, "adopted a session an earlier Hub left running"))              // adopted after the crash
	is.Equal(remoteProcesses(t, remote, " session "), running)                             // the same process
	is.Equal(do("GET", "s/"+ws+"/api/chat/conversations/"+cid, nil, &snap), http.StatusOK) // its conversation served again

	is.Equal(do("POST", "api/hub/sessions/"+ws+"/stop", nil, nil), http.StatusOK) // a polite stop
	socks, _ := filepath.Glob(filepath.Join(remote, ".cache/wharf/run/*.sock"))
	is.Equal(len(socks), 0)                               // leaves no socket there
	is.Equal(remoteProcesses(t, remote, " session "), "") // nor its session

	// The folder holding it is renamed there, journaled, through the
	// copied binary; the workspace follows.
	var renamed struct {
		Path         string
		WorkspaceIDs []string
	}
	is.Equal(do("POST", "api/hub/folders/rename", map[string]any{"path": filepath.Join(remote, "src"), "name": "code",
		"backend": "ssh:build1"}, &renamed), http.StatusOK) // renamed on the host
	is.Equal(renamed.WorkspaceIDs, []string{ws}) // its workspace followed
	_, err = os.Stat(filepath.Join(remote, "code", "app", ".git"))
	is.NoErr(err) // on its disk
	var state struct{ Workspaces []struct{ ID, Path string } }
	is.Equal(do("GET", "api/hub/state", nil, &state), http.StatusOK)
	is.Equal(state.Workspaces[0].Path, filepath.Join(remote, "code", "app")) // at its new path

	// A worktree of it is made there, by the host's git, and deleted.
	app := filepath.Join(remote, "code", "app")
	out, err = exec.CommandContext(ctx, "git", "-C", app, "-c", "user.name=Ann", "-c", "user.email=ann@example.com",
		"commit", "-q", "--allow-empty", "-m", "first").CombinedOutput()
	if err != nil {
		t.Fatalf("commit on the host: %v\n%s", err, out) // a first commit, by hand on the host
	}
	branch, err := exec.CommandContext(ctx, "git", "-C", app, "rev-parse", "--abbrev-ref", "HEAD").Output()
	is.NoErr(err)
	var made struct {
		OK       bool
		Checkout struct{ Path, WorkspaceID string }
	}
	is.Equal(do("POST", "api/hub/worktrees/create", map[string]any{"sourceWorkspaceId": ws, "mode": "new-branch", "branch": "task",
		"base": map[string]string{"kind": "local", "ref": strings.TrimSpace(string(branch))}}, &made), http.StatusOK)
	is.True(made.OK)                                                                     // made
	is.Equal(made.Checkout.Path, filepath.Join(remote, "code", "app.worktrees", "task")) // beside the repository there
	_, err = os.Stat(filepath.Join(made.Checkout.Path, ".git"))
	is.NoErr(err) // by the host's git
	var gone struct{ OK bool }
	is.Equal(do("POST", "api/hub/worktrees/delete", map[string]any{"sourceWorkspaceId": ws, "reference": "task", "confirm": true}, &gone),
		http.StatusOK)
	is.True(gone.OK) // deleted
	_, err = os.Stat(made.Checkout.Path)
	is.True(os.IsNotExist(err)) // from the host

	// Its remotes fetched there, lent the workspace's token: the host's
	// git, through the copied binary (wharf hostgit).
	origin := filepath.Join(remote, "origin.git")
	for _, args := range [][]string{{"clone", "-q", "--bare", app, origin}, {"-C", app, "remote", "add", "origin", origin},
		{"-C", origin, "branch", "upstream-only"}} {
		if out, err := exec.CommandContext(ctx, "git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var fetched struct {
		OK   bool
		Refs struct{ Remote []string }
	}
	is.Equal(do("POST", "api/hub/worktrees/fetch", map[string]any{"sourceWorkspaceId": ws}, &fetched), http.StatusOK)
	is.True(fetched.OK)                                                   // fetched there, lent the token
	is.True(slices.Contains(fetched.Refs.Remote, "origin/upstream-only")) // bringing the branch only the remote had

	// A clone job there: the host's git clones the repository beside it,
	// through the copied binary, and the new workspace lives there.
	var job struct{ JobID string }
	is.Equal(do("POST", "api/hub/clone-jobs", map[string]any{"url": "file://" + app, "dest": filepath.Join(remote, "code"),
		"folderName": "copy", "backend": "ssh:build1"}, &job), http.StatusAccepted)
	resp, err = c.Request(ctx, "GET", "api/hub/clone-jobs/"+job.JobID+"/events", nil)
	is.NoErr(err)
	result, err := daemontest.ReadSSE(resp.Body).Until(ctx, func(e daemontest.Event) bool { return e.Name == "result" })
	resp.Body.Close()
	is.NoErr(err)
	var cloned struct{ Status, Target, WorkspaceID string }
	is.NoErr(json.Unmarshal([]byte(result.Data), &cloned))
	is.Equal(cloned.Status, "succeeded")                           // the clone succeeded
	is.Equal(cloned.Target, filepath.Join(remote, "code", "copy")) // into the folder there
	_, err = os.Stat(filepath.Join(remote, "code", "copy", ".git"))
	is.NoErr(err) // on the host's disk
	left, _ := filepath.Glob(filepath.Join(remote, ".cache/wharf/run/*"))
	is.Equal(left, []string(nil)) // its credentials' folder there is gone
	_, err = sec.ScanStateDir(remote, "on the host, after a fetch and a clone there")
	is.NoErr(err)                                                                                     // and no file of the host's, repositories included, holds the lent token
	is.Equal(do("POST", "api/hub/workspaces/"+cloned.WorkspaceID+"/forget", nil, nil), http.StatusOK) // forgotten again

	is.Equal(do("POST", "api/hub/hosts/build1/remove", nil, nil), http.StatusConflict)  // in use
	is.Equal(do("POST", "api/hub/workspaces/"+ws+"/forget", nil, nil), http.StatusOK)   // forget it
	is.Equal(do("POST", "api/hub/hosts/build1/remove", nil, nil), http.StatusNoContent) // now it goes
	var hosts struct{ Hosts []any }
	is.Equal(do("GET", "api/hub/hosts", nil, &hosts), http.StatusOK)
	is.Equal(len(hosts.Hosts), 0)                // gone
	is.Equal(remoteProcesses(t, remote, ""), "") // with its connection: nothing of Wharf runs there

	is.NoErr(d.Stop(ctx))
	_, err = sec.ScanStateDir(d.StateDir(), "after the run")
	is.NoErr(err)
	io.WriteString(sec.Log("wharf serve"), logs+d.Stderr())
	sec.Check(t) // the token is in no log, no state file and no file on the host
}

// remoteEnv is the environment of the one session process running the
// binary copied under remote (the child, not the start script around it).
func remoteEnv(t *testing.T, remote string) map[string]string {
	t.Helper()
	var pid string
	for _, line := range strings.Split(remoteProcesses(t, remote, " session "), "\n") {
		p, cmd, _ := strings.Cut(line, " ")
		if strings.HasPrefix(cmd, filepath.Join(remote, ".cache/wharf/bin")) {
			pid = p // the child itself, not the shell that started it
		}
	}
	raw, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Fatalf("the session's environment: %v", err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(raw), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// remoteProcesses lists the processes running the binary copied under
// remote whose command line holds with, one per line ("" for none).
func remoteProcesses(t *testing.T, remote, with string) string {
	t.Helper()
	out, _ := exec.Command("pgrep", "-af", filepath.Join(remote, ".cache/wharf/bin")).Output()
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" && strings.Contains(line, with) {
			found = append(found, line)
		}
	}
	return strings.Join(found, "\n")
}
