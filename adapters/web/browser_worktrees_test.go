package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// wtRow is a JavaScript expression for the worktree row of branch.
func wtRow(branch string) string {
	return `document.querySelector('.wt-row[data-branch=` + browsertest.JS(branch) + `]')`
}

// A task from a phone: "New task" makes a branch's worktree beside the
// repository, starts it and a conversation with the agent in it; the
// agent answers; the list shows the worktree under its repository; the
// worktree is deleted from the page, showing the untracked file it would
// lose and asking to acknowledge it, and the branch stays.
func TestBrowserATaskWorktreeIsCreatedTalkedToAndDeleted(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+e.ws))
	must(t, p.Wait(`document.querySelector('.worktrees') && document.querySelector('.worktrees').innerText.includes('No worktrees yet')`, wait))
	must(t, p.Wait(fits, wait)) // the section fits a phone

	must(t, p.ClickText(`.worktrees`, "New task"))
	must(t, p.Type(`dialog[open] input[name=branch]`, "fix/login"))
	must(t, p.ClickText(`dialog[open]`, "Create"))
	must(t, p.Wait(`/^\/w\/[^/]+\/c\/[^/]+$/.test(location.pathname) && document.querySelector('#composer-text')`, long)) // the conversation opens
	tree, err := browsertest.Eval[string](p, `decodeURIComponent(location.pathname.split('/')[2])`)
	must(t, err)
	is.True(tree != e.ws) // in the new worktree's workspace
	say(t, p, "echo on my branch")
	must(t, p.Wait(shows("assistant_message", "echo on my branch"), long)) // the agent answers there

	dir := filepath.Join(e.repo+".worktrees", "fix-login")
	_, err = os.Stat(filepath.Join(dir, ".git"))
	is.NoErr(err) // the worktree is beside the repository
	is.NoErr(os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("draft\n"), 0o644))

	must(t, p.Go(e.hub.URL+"w/"+tree))
	must(t, p.Wait(`document.querySelector('.ws-creds')?.innerText.includes('Uses the credentials of') && document.querySelector('.ws-creds a')?.innerText === 'Project'`, wait)) // none of its own

	must(t, p.Go(e.hub.URL))
	must(t, p.Wait(rowOf(tree)+`?.classList.contains('ws-child') && `+rowOf(e.ws)+`.nextElementSibling === `+rowOf(tree), wait)) // listed under its repository

	must(t, p.Go(e.hub.URL+"w/"+e.ws))
	must(t, p.Wait(wtRow("fix/login"), wait))
	must(t, p.ClickText(`.wt-row[data-branch="fix/login"]`, "Delete"))
	must(t, p.Wait(`document.querySelector('dialog[open] .wt-loss-cat[data-category=untracked]')?.innerText.includes('notes.txt')`, wait)) // what it would lose
	must(t, p.Wait(`document.querySelector('dialog[open] .btn-danger').disabled`, wait))                                                   // not before it is acknowledged
	must(t, p.Wait(`document.querySelector('dialog[open] .btn-danger').innerText.includes('Stop and delete')`, wait))                      // it runs: stopped first
	must(t, p.Click(`dialog[open] input[name=acknowledge]`))
	must(t, p.ClickText(`dialog[open]`, "Stop and delete"))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && !`+wtRow("fix/login"), long))
	_, err = os.Stat(dir)
	is.True(os.IsNotExist(err)) // its files are gone
	branches, err := gitOut(e.repo, "branch", "--list", "fix/login")
	is.NoErr(err)
	is.True(strings.Contains(branches, "fix/login")) // the branch stays
}

// Files that appear after the preflight are never deleted: the Hub
// refuses, the dialog shows the new preflight, and only a second
// acknowledgement deletes.
func TestBrowserAWorktreeWhoseFilesChangedIsNotDeletedUnseen(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	repo := e.repo(t, "app")
	ws, err := e.api.Register(e.ctx, repo, "App", false)
	is.NoErr(err)
	var res struct {
		OK       bool
		Checkout struct{ WorkspaceID, Path string }
	}
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/worktrees/create", map[string]any{"sourceWorkspaceId": ws, "mode": "new-branch",
		"branch": "spike", "base": map[string]string{"kind": "local", "ref": "main"}}, &res))
	is.True(res.OK) // a worktree, made with curl
	is.NoErr(os.WriteFile(filepath.Join(res.Checkout.Path, "a.txt"), []byte("a"), 0o644))

	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+ws))
	must(t, p.ClickText(`.wt-row[data-branch=spike]`, "Delete"))
	must(t, p.Wait(`document.querySelector('dialog[open] .wt-loss-cat[data-category=untracked] .count')?.innerText === '1'`, wait))
	must(t, p.Click(`dialog[open] input[name=acknowledge]`))
	is.NoErr(os.WriteFile(filepath.Join(res.Checkout.Path, "b.txt"), []byte("b"), 0o644)) // an agent writes meanwhile
	must(t, p.ClickText(`dialog[open]`, "Delete"))
	must(t, p.Wait(`document.querySelector('dialog[open] .note-error, dialog[open] [role=alert]')?.innerText.includes('changed while deletion was prepared')`, wait))
	must(t, p.Wait(`document.querySelector('dialog[open] .wt-loss-cat[data-category=untracked] .count')?.innerText === '2'`, wait)) // the new preflight
	_, err = os.Stat(filepath.Join(res.Checkout.Path, "b.txt"))
	is.NoErr(err) // nothing was removed
	must(t, p.Click(`dialog[open] input[name=acknowledge]`))
	must(t, p.ClickText(`dialog[open]`, "Delete"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	_, err = os.Stat(res.Checkout.Path)
	is.True(os.IsNotExist(err)) // deleted once seen
}

// gitOut runs git in dir, with no configuration of the user's.
func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	b, err := cmd.CombinedOutput()
	return string(b), err
}
