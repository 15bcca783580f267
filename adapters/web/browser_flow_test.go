package web_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The whole flow: log in, see workspaces appear as another client
// registers them, start one and see it run, see its files change as they
// are saved, stop it, forget it, and log out.
func TestBrowserWorkspaceFlow(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)

	must(t, p.LogIn(e.hub))
	must(t, p.Wait(`document.querySelector('.empty-title')`, wait)) // the empty state: no workspace yet

	// Registered by another client while the page is open: with no
	// workspace, no live stream can open, so the page polls the state.
	one := e.repo(t, "alpha")
	alpha, err := e.api.Register(e.ctx, one, "Alpha", false)
	is.NoErr(err) // registered over the API
	must(t, p.Wait(rowOf(alpha), wait))
	must(t, p.Wait(`document.querySelector('.live-on')`, wait)) // and now the stream is live

	// The second one arrives through the live stream's activity topic.
	two := e.repo(t, "beta")
	beta, err := e.api.Register(e.ctx, two, "Beta", false)
	is.NoErr(err) // registered over the API
	must(t, p.Wait(rowOf(beta), wait))
	is.Equal(p.Text(row(alpha)+` .badge`), "Stopped") // stopped as registered

	// Start from the list; the badge follows the live activity.
	must(t, p.ClickText(row(alpha), "Start Alpha"))
	must(t, p.Wait(rowOf(alpha)+`.querySelector('.badge').innerText.trim() === 'Running'`, wait))

	// Its page: the files and the Git state, live.
	must(t, p.Click(row(alpha)+` .ws-name`))
	must(t, p.Wait(`location.pathname === '/w/`+alpha+`'`, wait))
	must(t, p.Wait(`document.querySelector('.tree-file[data-path="README.md"]')`, wait))
	must(t, p.Wait(`document.querySelector('.commits li .commit-subject').innerText === 'Start the project'`, wait))
	is.NoErr(os.MkdirAll(filepath.Join(one, "docs"), 0o755))                                                          // a new folder
	is.NoErr(os.WriteFile(filepath.Join(one, "docs", "plan.md"), []byte("# Plan\n"), 0o644))                          // saved in the folder
	must(t, p.Wait(`document.querySelector('.tree-file[data-path="docs/plan.md"]')`, wait))                           // appears in the tree
	must(t, p.Wait(`[...document.querySelectorAll('.change-path')].some(e => e.innerText === 'docs/plan.md')`, wait)) // and in Git's changes
	is.NoErr(os.Remove(filepath.Join(one, "docs", "plan.md")))                                                        // removed in the folder
	must(t, p.Wait(`!document.querySelector('.tree-file[data-path="docs/plan.md"]')`, wait))                          // leaves the tree

	// Stop it from its page, then forget it from the list.
	must(t, p.ClickText(`.ws-head`, "Stop"))
	must(t, p.Wait(`document.querySelector('.ws-head .badge').innerText.trim() === 'Stopped'`, wait))

	must(t, p.Click(`a.back`))
	must(t, p.Wait(rowOf(alpha), wait))
	must(t, p.ClickText(row(alpha), "Forget Alpha"))
	must(t, p.ClickText(`dialog[open]`, "Forget"))
	must(t, p.Wait(`!`+rowOf(alpha), wait))
	var state struct {
		Workspaces []struct{ ID string } `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state)) // the Hub's view
	is.Equal(len(state.Workspaces), 1)                              // alpha is forgotten
	is.Equal(state.Workspaces[0].ID, beta)                          // beta stays
	_, err = os.Stat(filepath.Join(one, "README.md"))
	is.NoErr(err) // forgetting keeps the files

	// Sign out: the session is revoked and the page is the login page.
	must(t, p.ClickText(`header`, "Sign out"))
	must(t, p.Wait(`location.pathname === '/login' && document.body.innerText.includes('You are signed out.')`, wait))
	must(t, p.Go(e.hub.URL))
	must(t, p.Wait(`location.pathname === '/login' && document.querySelector('input[name=password]')`, wait)) // no session any more
}

// row is the CSS selector of workspace id's list row.
func row(id string) string { return `.ws-row[data-ws="` + id + `"]` }
