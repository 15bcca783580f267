package web_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// Adding workspaces through the folder browser: a new folder, registered
// after confirming `git init`; renamed while its workspace runs (after
// confirming the stop); a new repository; an empty folder removed.
func TestBrowserAddWorkspace(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"add"))
	must(t, p.Wait(`document.querySelector('.browser-here').innerText === `+browsertest.JS(e.home), wait)) // starts at the default: home

	// A new folder, then register it: it is no repository, so the page
	// asks before git init.
	must(t, p.ClickText(`.browser-bar`, "New folder"))
	must(t, p.Type(`dialog[open] input`, "plain"))
	must(t, p.ClickText(`dialog[open]`, "Create"))
	must(t, p.Wait(`document.querySelector('.browser-here').innerText.endsWith('/plain')`, wait))
	must(t, p.Wait(`document.querySelector('#register-title')`, wait))
	must(t, p.ClickText(`section[aria-labelledby=register-title]`, "Register"))
	must(t, p.Wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').innerText.includes('not a Git repository')`, wait))
	must(t, p.ClickText(`dialog[open]`, "Run git init and register"))
	must(t, p.Wait(`location.pathname === '/w/plain' && document.querySelector('h1').innerText === 'plain'`, wait))
	must(t, p.Wait(`document.querySelector('.ws-head .badge').innerText.trim() === 'Running'`, wait))
	_, err := os.Stat(filepath.Join(e.home, "plain", ".git"))
	is.NoErr(err) // git init ran

	// Rename its folder while it runs: the Hub wants the stop authorized.
	must(t, p.Go(e.hub.URL+"add?path="+e.home))
	must(t, p.ClickText(`.dirs`, "Rename folder plain"))
	must(t, p.Type(`dialog[open] input`, "renamed"))
	must(t, p.ClickText(`dialog[open]`, "Rename"))
	must(t, p.Wait(`document.querySelector('dialog[open]') && document.querySelector('dialog[open]').innerText.includes('plain')
		&& document.querySelector('dialog[open] .dialog-title').innerText.includes('Stop workspaces')`, wait))
	must(t, p.ClickText(`dialog[open]`, "Stop and rename"))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && [...document.querySelectorAll('.dir-name')].some(a => a.innerText.trim() === 'renamed')`, wait))
	var state struct {
		Workspaces []struct {
			ID, Path string
			Running  bool
		} `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state))      // the Hub's view
	is.Equal(len(state.Workspaces), 1)                                   // one workspace
	is.Equal(state.Workspaces[0].Path, filepath.Join(e.home, "renamed")) // it followed the rename
	is.True(!state.Workspaces[0].Running)                                // stopped for it

	// A new repository, in the folder in view.
	must(t, p.Type(`section[aria-labelledby=create-title] input`, "fresh"))
	must(t, p.ClickText(`section[aria-labelledby=create-title]`, "Create repository"))
	must(t, p.Wait(`location.pathname === '/w/fresh' && document.querySelector('h1').innerText === 'fresh'`, wait))

	// An empty folder removed.
	is.NoErr(os.Mkdir(filepath.Join(e.home, "empty"), 0o755)) // made beside the Hub
	must(t, p.Go(e.hub.URL+"add?path="+e.home))
	must(t, p.ClickText(`.dirs`, "Remove folder empty"))
	must(t, p.ClickText(`dialog[open]`, "Remove"))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && ![...document.querySelectorAll('.dir-name')].some(a => a.innerText.trim() === 'empty')`, wait))
	_, err = os.Stat(filepath.Join(e.home, "empty"))
	is.True(errors.Is(err, os.ErrNotExist)) // gone from the disk

	// A refusal shows in words where it happened: a folder that exists.
	must(t, p.ClickText(`.browser-bar`, "New folder"))
	must(t, p.Type(`dialog[open] input`, "renamed"))
	must(t, p.ClickText(`dialog[open]`, "Create"))
	must(t, p.Wait(`document.querySelector('dialog[open] [role=alert]') && document.querySelector('dialog[open] [role=alert]').innerText.includes('already exists')`, wait))
	must(t, p.Do(chromedp.KeyEvent("\x1b")))
}

// Settings: sign another device out, set and clear the default folder,
// switch to dark.
func TestBrowserSettings(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"settings"))
	must(t, p.Wait(`document.querySelectorAll('.sessions li').length === 2`, wait))
	must(t, p.ClickText(`.sessions`, "Sign out curl"))
	must(t, p.ClickText(`dialog[open]`, "Sign out"))
	must(t, p.Wait(`document.querySelectorAll('.sessions li').length === 1 && document.querySelector('.sessions .tag-current')`, wait))
	err := e.api.Do(e.ctx, "GET", "/api/hub/state", nil, nil)
	var se *browsertest.StatusError
	is.True(errors.As(err, &se) && se.Status == 401) // that device is signed out

	projects := filepath.Join(e.home, "projects")
	is.NoErr(os.Mkdir(projects, 0o755)) // a folder for new workspaces
	must(t, p.Type(`.page-settings form input`, projects))
	must(t, p.ClickText(`.page-settings form`, "Save"))
	must(t, p.Wait(`document.querySelector('.page-settings section[aria-labelledby=defaults-title] code').innerText === `+browsertest.JS(projects), wait))
	must(t, p.Go(e.hub.URL+"add"))
	must(t, p.Wait(`document.querySelector('.browser-here').innerText === `+browsertest.JS(projects), wait)) // the browser starts there
	must(t, p.Go(e.hub.URL+"settings"))
	must(t, p.ClickText(`.page-settings form`, "Clear"))
	must(t, p.Wait(`document.querySelector('section[aria-labelledby=defaults-title] code').innerText === `+browsertest.JS(e.home), wait))

	// A path that is no directory: the Hub's refusal, in words.
	must(t, p.Type(`.page-settings form input`, filepath.Join(e.home, "nowhere")))
	must(t, p.ClickText(`.page-settings form`, "Save"))
	must(t, p.Wait(`document.querySelector('section[aria-labelledby=defaults-title] [role=alert]')`, wait))
	is.True(p.Text(`section[aria-labelledby=defaults-title] [role=alert]`) != "") // says why

	must(t, p.ClickText(`[role=radiogroup]`, "Dark"))
	must(t, p.Wait(`document.documentElement.dataset.theme === 'dark' && getComputedStyle(document.body).backgroundColor === 'rgb(21, 23, 28)'`, wait))
}
