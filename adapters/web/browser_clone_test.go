package web_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/adapters/internal/githttptest"
)

// A local repository cloned from the Clone page, reached from the Add
// page: the destination picked in the page's folder browser, the folder
// name derived from the URL as the Hub derives it, started after the
// clone, the phases and the result, and the new workspace opened from it.
func TestBrowserCloneALocalRepository(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	src := e.repo(t, "origin-repo.git")
	is.NoErr(os.Mkdir(filepath.Join(e.home, "projects"), 0o755)) // where the clone goes
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))

	must(t, p.Go(e.hub.URL+"add?path="+e.home))
	must(t, p.ClickText(`.add-panels`, "Clone a repository"))
	must(t, p.Wait(`location.pathname === '/clone' && document.querySelector('input[name=url]')`, wait))
	must(t, p.Wait(`document.querySelector('.dest').innerText === `+browsertest.JS(e.home), wait)) // the Add page's folder
	must(t, p.Type(`input[name=url]`, src))
	must(t, p.Wait(`document.querySelector('input[name=folderName]').placeholder === 'origin-repo'`, wait)) // derived as the Hub does
	must(t, p.Wait(`document.querySelector('select[name=credential]').disabled`, wait))                     // no credential for a local path

	must(t, p.ClickText(`.clone-form`, "Change"))
	must(t, p.ClickText(`dialog[open]`, "projects"))
	must(t, p.Wait(`document.querySelector('dialog[open] .browser-here').innerText === `+browsertest.JS(filepath.Join(e.home, "projects")), wait))
	must(t, p.ClickText(`dialog[open]`, "Clone here"))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && document.querySelector('.dest').innerText === `+
		browsertest.JS(filepath.Join(e.home, "projects")), wait))
	must(t, p.Type(`input[name=displayName]`, "Origin"))
	must(t, p.Click(`input[name=start]`))
	must(t, p.ClickText(`.clone-form`, "Clone"))

	must(t, p.Wait(`/^\/clone\/[0-9a-f-]{36}$/.test(location.pathname)`, wait))
	must(t, p.Wait(phaseIs("result", "done"), wait))
	must(t, p.Wait(phaseIs("cloning", "done")+` && `+phaseIs("registering", "done")+` && `+phaseIs("starting", "done"), wait))
	is.True(strings.Contains(p.Text(`.term`), "Cloning into")) // git's own words
	is.True(strings.Contains(p.Text(`.clone-result`), filepath.Join(e.home, "projects", "origin-repo")+" and registered, and it is running"))
	must(t, p.Wait(`!document.querySelector('.answer') && !document.querySelector('.clone-cancel')`, wait)) // nothing to answer or cancel

	must(t, p.ClickText(`.clone-result`, "Open Origin"))
	must(t, p.Wait(`/^\/w\/[^/]+$/.test(location.pathname) && document.querySelector('.tree-file[data-path="README.md"]')`, wait))
	var state struct {
		Workspaces []struct{ Path, DisplayName string } `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state))                                                     // the Hub's view
	is.Equal(len(state.Workspaces), 1)                                                                                  // one workspace
	is.Equal(state.Workspaces[0].Path, filepath.Join(e.home, "projects", "origin-repo"))                                // in the picked folder
	is.Equal(state.Workspaces[0].DisplayName, "Origin")                                                                 // with the typed name
	must(t, p.Wait(`location.pathname.startsWith('/w/') && document.querySelector('h1').innerText === 'Origin'`, wait)) // and its page
}

// A source that asks for a user name and a password (plain HTTP on
// loopback, with basic auth): the prompts show in the page's terminal,
// a reload re-attaches and replays them, a cut connection resumes
// without showing anything twice, the answers go through masked fields
// and are left nowhere in the page, and another device sees the result.
func TestBrowserCloneAnswersPromptsThroughThePage(t *testing.T) {
	t.Parallel() // one of the longest (browser_test.go)
	is := is.New(t)
	e := newEnv(t)
	const password = "hunter2-very-secret"
	url := promptingSource(t, e, "ann", password) + "/private.git"
	proxy, err := browsertest.NewProxy(e.hub.URL)
	is.NoErr(err) // a network between the page and the Hub
	t.Cleanup(proxy.Close)
	via := *e.hub
	via.URL = proxy.URL
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(&via))
	must(t, p.Go(via.URL+"clone"))
	must(t, p.Wait(`document.querySelector('.dest').innerText === `+browsertest.JS(e.home), wait)) // the default parent
	must(t, p.Type(`input[name=url]`, url))
	must(t, p.ClickText(`.clone-form`, "Clone"))
	must(t, p.Wait(`/^\/clone\/[0-9a-f-]{36}$/.test(location.pathname)`, wait))
	job := evalString(t, p, `location.pathname`)

	user := `document.querySelector('.term').innerText.includes('Username for')`
	must(t, p.Wait(user+` && `+phaseIs("cloning", "current"), wait))
	must(t, p.Wait(`document.querySelector('input[name=answer]').type === 'password'`, wait)) // a user name counts as secret

	must(t, p.Go(via.URL+strings.TrimPrefix(job, "/"))) // a reload re-attaches, from the first event
	must(t, p.Wait(user+` && `+phaseIs("cloning", "current"), wait))
	proxy.Cut() // the stream resumes after the last event it saw
	must(t, p.Wait(`document.querySelector('.note-warn')`, wait))
	must(t, p.Wait(`!document.querySelector('.note-warn')`, long))
	is.Equal(countOf(t, p, "Username for"), 1) // nothing shown twice
	is.True(regexp.MustCompile(`(?i)GET /api/hub/clone-jobs/[0-9a-f-]{36}/events HTTP/1.1\r\n(.+\r\n)*last-event-id: [1-9]`).
		MatchString(proxy.Sent())) // since the page asked for what followed the last event it saw

	must(t, p.Type(`input[name=answer]`, "ann\r"))
	must(t, p.Wait(`document.querySelector('.term').innerText.includes('Password for')`, wait))
	must(t, p.Wait(`document.querySelector('input[name=answer]').type === 'password' && document.querySelector('input[name=answer]').value === ''`, wait))
	must(t, p.Type(`input[name=answer]`, password+"\r"))
	must(t, p.Wait(phaseIs("result", "done"), long))
	must(t, p.Wait(`document.querySelector('.clone-result a')`, wait))
	left := evalString(t, p, `document.documentElement.outerHTML + [...document.querySelectorAll('input')].map((i) => i.value).join() +
		JSON.stringify(localStorage) + JSON.stringify(sessionStorage)`)
	is.True(!strings.Contains(left, password)) // the password is nowhere in the page

	other := e.page(t, browsertest.Phone) // a second device of the same user
	must(t, other.LogIn(e.hub))
	must(t, other.Go(e.hub.URL+strings.TrimPrefix(job, "/")))
	must(t, other.Wait(phaseIs("result", "done")+` && document.querySelector('.clone-result a')`, wait))
	is.True(strings.Contains(other.Text(`.term`), "Username for")) // the whole output, replayed
}

// A clone stalled on a source that never answers is cancelled from the
// page, at a phone's width: the Hub's answer shows, then the result, and
// nothing is registered.
func TestBrowserCloneCancelsAStalledClone(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(stall.Close)
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"clone?dest="+e.home))
	must(t, p.Wait(`document.querySelector('.dest').innerText === `+browsertest.JS(e.home), wait))
	must(t, p.Wait(fits, wait))
	must(t, p.Type(`input[name=url]`, stall.URL+"/stalled.git"))
	must(t, p.ClickText(`.clone-form`, "Clone"))
	must(t, p.Wait(phaseIs("cloning", "current"), wait))
	must(t, p.Wait(fits, wait))
	must(t, p.ClickText(`.clone-cancel`, "Cancel clone"))
	must(t, p.Wait(`document.querySelector('.clone-cancel [role=status]')?.innerText === 'Cancelled.' || `+phaseIs("result", "failed"), wait))
	must(t, p.Wait(phaseIs("result", "failed")+` && document.querySelector('[data-phase=result]').innerText.trim() === 'Cancelled'`, wait))
	is.True(strings.Contains(p.Text(`.clone-result`), "cancelled"))
	drawn, err := browsertest.Eval[bool](p, phaseIs("cloning", "failed"))
	is.NoErr(err)
	is.True(drawn) // the step it was cancelled in is not drawn done
	var state struct {
		Workspaces []struct{ ID string } `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state)) // the Hub's view
	is.Equal(len(state.Workspaces), 0)                              // nothing registered

	must(t, p.Go(e.hub.URL+"clone/00000000-0000-4000-8000-000000000000"))
	must(t, p.Wait(`document.querySelector('.clone-gone')`, wait)) // a job the Hub does not know says so
}

// fits is the condition that the page needs no sideways scrolling.
const fits = `document.documentElement.scrollWidth <= window.innerWidth`

// phaseIs is the condition that the job page shows phase in state.
func phaseIs(phase, state string) string {
	return `document.querySelector('[data-phase=` + phase + `]')?.classList.contains('phase-` + state + `')`
}

// countOf counts the times s shows in the job's terminal.
func countOf(t *testing.T, p *browsertest.Page, s string) int {
	t.Helper()
	n, err := browsertest.Eval[int](p, `document.querySelector('.term').innerText.split(`+browsertest.JS(s)+`).length - 1`)
	must(t, err)
	return n
}

func evalString(t *testing.T, p *browsertest.Page, expr string) string {
	t.Helper()
	s, err := browsertest.Eval[string](p, expr)
	must(t, err)
	return s
}

// promptingSource serves a bare repository over plain HTTP on loopback
// with git http-backend, asking for basic auth as user with password, and
// returns its URL: without a credential, git asks for both on its
// terminal.
func promptingSource(t *testing.T, e *env, user, password string) string {
	t.Helper()
	root := t.TempDir()
	src := e.repo(t, "seed")
	bare := exec.CommandContext(e.ctx, "git", "clone", "--quiet", "--bare", src, filepath.Join(root, "private.git"))
	bare.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	b, err := bare.CombinedOutput()
	if err != nil {
		t.Fatalf("git clone --bare: %v: %s", err, b)
	}
	return githttptest.New(t, root, user, password, false).URL
}

// The Clone page offers only the credentials that fit the URL typed: a
// token made for the URL's host over HTTPS, none over SSH when no key
// logs in, and no choice at all for a local path.
func TestBrowserCloneOffersOnlyTheCredentialsThatFit(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	ids := map[string]string{}
	for _, host := range []string{"github.com", "gitlab.com"} {
		var res struct {
			Credential struct{ ID string } `json:"credential"`
		}
		is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/credentials/token", map[string]any{"name": host, "host": host,
			"token": "tok-" + host, "capabilities": []string{"https-git"}}, &res)) // a token for host
		ids[host] = res.Credential.ID
	}
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"clone"))
	offered := `JSON.stringify([...document.querySelectorAll('select[name=credential] option')].map((o) => o.value))`
	for _, c := range []struct{ url, offered string }{
		{"https://github.com/me/p.git", `["","` + ids["github.com"] + `"]`},
		{"https://GitLab.com/me/p", `["","` + ids["gitlab.com"] + `"]`},
		{"git@github.com:me/p.git", `[""]`},
		{"/srv/git/p", `[""]`},
	} {
		must(t, p.Type(`input[name=url]`, c.url))
		must(t, p.Wait(offered+` === `+browsertest.JS(c.offered), wait))
	}
	must(t, p.Wait(`document.querySelector('select[name=credential]').disabled`, wait)) // nothing logs in to a local path
	must(t, p.Wait(fits, wait))
}
