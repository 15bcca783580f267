package web_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// credential is what the tests read of a credential over the API.
type credential struct {
	ID          string
	Name        string
	Enabled     bool
	Assignments []struct {
		WorkspaceID string `json:"workspaceId"`
		Role, Host  string
		UsePolicy   string `json:"usePolicy"`
	}
}

// newSSHKey generates an SSH key over the API ("another device") and
// returns its id.
func (e *env) newSSHKey(t *testing.T, name, passphrase string) string {
	t.Helper()
	var res struct{ Credential credential }
	must(t, e.api.Do(e.ctx, "POST", "/api/hub/credentials/ssh/generate", map[string]any{
		"name": name, "capabilities": []string{"ssh-authentication", "ssh-signing"}, "passphrase": passphrase}, &res))
	return res.Credential.ID
}

// credentials lists the credentials over the API.
func (e *env) credentials(t *testing.T) []credential {
	t.Helper()
	var res struct{ Credentials []credential }
	must(t, e.api.Do(e.ctx, "GET", "/api/hub/credentials", nil, &res))
	return res.Credentials
}

// Removing an assignment from a running workspace: the Hub refuses until
// the stop is authorized; the page asks, and "Stop and remove" stops the
// workspace and removes it.
func TestBrowserCredentialUnassignStopsARunningWorkspace(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "busy"), "Busy", true)
	is.NoErr(err) // registered and started
	cred := e.newSSHKey(t, "deploy", "a passphrase")
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/credentials/"+cred+"/assign",
		map[string]any{"workspaceId": id, "role": "signing"}, nil)) // assigned while it runs
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	row := credRow(p, t, "deploy")
	must(t, p.ClickText(row, "Remove deploy from Busy: signs commits"))
	must(t, p.ClickText(`dialog[open]`, "Remove"))
	must(t, p.Wait(`document.querySelector('dialog[open] .dialog-title')?.innerText === 'Stop Busy?'`, wait))
	is.True(strings.Contains(p.Text(`dialog[open] .dialog-body`), "running workspace session")) // the Hub's words
	is.Equal(len(e.credentials(t)[0].Assignments), 1)                                           // nothing removed yet
	must(t, p.ClickText(`dialog[open]`, "Stop and remove"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row)+`).innerText.includes('Not assigned to any workspace')`, wait))
	var state struct {
		Workspaces []struct{ Running bool } `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state)) // the Hub's view
	is.True(!state.Workspaces[0].Running)                           // stopped for it
	is.Equal(len(e.credentials(t)[0].Assignments), 0)               // and the assignment is gone
}

// Deleting asks first, and a credential with assignments is deleted only
// once "also remove its assignments" is ticked. Disable, enable and lock
// work from the row.
func TestBrowserCredentialDeleteNeedsConfirmation(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "quiet"), "Quiet", false)
	is.NoErr(err) // registered
	cred := e.newSSHKey(t, "old key", "old passphrase")
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/credentials/"+cred+"/assign",
		map[string]any{"workspaceId": id, "role": "authentication", "host": "example.com"}, nil)) // assigned
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/credentials/"+cred+"/unlock",
		map[string]any{"passphrase": "old passphrase"}, nil)) // unlocked
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	row := credRow(p, t, "old key")
	is.Equal(p.Text(row+` .badge`), "Ready") // unlocked

	must(t, p.ClickText(row, "Lock old key"))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .badge`)+`).innerText.trim() === 'Locked'`, wait))
	must(t, p.ClickText(row, "Disable old key"))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .badge`)+`).innerText.trim() === 'Disabled'`, wait))
	is.True(!e.credentials(t)[0].Enabled) // disabled at the Hub
	must(t, p.ClickText(row, "Enable old key"))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .badge`)+`).innerText.trim() === 'Locked'`, wait))

	// Cancel keeps it; Delete waits for the assignments to be let go.
	must(t, p.ClickText(row, "Delete old key"))
	must(t, p.Wait(`document.querySelector('dialog[open]')?.innerText.includes('Quiet')`, wait))
	must(t, p.Do(chromedp.KeyEvent(kb.Escape)))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	is.Equal(len(e.credentials(t)), 1) // still there
	must(t, p.ClickText(row, "Delete old key"))
	must(t, p.Wait(`document.querySelector('dialog[open] .btn-danger').disabled`, wait))
	must(t, p.Click(`dialog[open] input[type=checkbox]`))
	must(t, p.ClickText(`dialog[open]`, "Delete"))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && !document.querySelector('.cred-row')`, wait))
	is.Equal(len(e.credentials(t)), 0) // gone at the Hub
	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('.ws-creds')?.innerText.includes('No credentials assigned')`, wait))
}

// The tools: each with its readiness; an override that is no executable
// is refused in the Hub's words, and a real one is kept and cleared.
func TestBrowserCredentialTools(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	n, err := browsertest.Eval[int](p, `document.querySelectorAll('.tool').length`)
	is.NoErr(err)  // counted
	is.Equal(n, 9) // every CredentialToolName
	git := `.tool[data-tool="git"]`
	is.True(strings.Contains(p.Text(git+` .badge`), "Ready")) // git is installed here

	must(t, p.ClickText(git, "Set the path of git"))
	must(t, p.Type(git+` input`, e.home))
	must(t, p.ClickText(git, "Save"))
	must(t, p.Wait(`document.querySelector('.tool[data-tool="git"] [role=alert]')`, wait))
	is.True(p.Text(git+` [role=alert]`) != "") // the Hub says why

	real, err := exec.LookPath("git")
	is.NoErr(err) // git, as this machine has it
	must(t, p.Type(git+` input`, real))
	must(t, p.ClickText(git, "Save"))
	must(t, p.Wait(`!document.querySelector('.tool[data-tool="git"] form') && document.querySelector('.tool[data-tool="git"] .tool-path').innerText === `+browsertest.JS(real), wait))
	must(t, p.ClickText(git, "Set the path of git"))
	must(t, p.ClickText(git, "Clear override"))
	must(t, p.Wait(`!document.querySelector('.tool[data-tool="git"] form')`, wait))
	must(t, p.ClickText(git, "Test git again"))
	must(t, p.Wait(`document.querySelector('.tool[data-tool="git"] .badge').innerText.includes('Ready')`, wait))
}

// At a phone's 390 px the Credentials page fits the width, its actions
// wrap, the navigation (with Credentials) sits at the bottom, and a
// dialog fits too.
func TestBrowserCredentialsPhoneLayout(t *testing.T) {
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "phone"), "A workspace with a rather long display name that wraps", false)
	must(t, err)
	cred := e.newSSHKey(t, "a key with a rather long name that has to wrap on a phone screen", "p")
	must(t, e.api.Do(e.ctx, "POST", "/api/hub/credentials/"+cred+"/assign",
		map[string]any{"workspaceId": id, "role": "authentication", "host": "git.example-with-a-long-host-name.com"}, nil))
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	must(t, p.Wait(`document.querySelector('.cred-row .assignments')`, wait))
	fits := `document.documentElement.scrollWidth <= window.innerWidth`
	must(t, p.Wait(fits, wait))
	must(t, p.Wait(`(() => { const r = document.querySelector('nav.nav').getBoundingClientRect(); return r.bottom >= window.innerHeight - 1 && r.top > window.innerHeight / 2; })()`, wait))
	must(t, p.Wait(`[...document.querySelectorAll('nav.nav a')].every((a) => a.getBoundingClientRect().right <= window.innerWidth)`, wait))
	must(t, p.ClickText(`.cred-add`, "Generate an SSH key"))
	must(t, p.Wait(`(() => { const d = document.querySelector('dialog[open]'); return d && d.getBoundingClientRect().right <= window.innerWidth; })()`, wait))
	must(t, p.Do(chromedp.KeyEvent(kb.Escape)))
	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('.ws-creds')?.innerText.includes('rather long name')`, wait))
	must(t, p.Wait(fits, wait))
}
