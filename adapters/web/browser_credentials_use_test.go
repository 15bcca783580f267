package web_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// Every use seen, and approved where the owner asks, through the real
// daemon: a token assigned with "Ask every time" to a running workspace,
// restarted to take it; git's credential helper, run in that session's
// own environment, asks
// for it; the page shows the waiting use and its answer decides what the
// helper gets. The token itself never reaches the page.

// helperAnswer is what one run of `wharf git-credential get` printed.
type helperAnswer struct {
	out string
	err error
}

// askToken runs `wharf git-credential get` for https://host as the
// session's git would, in env, and sends its answer once it ends.
func (e *env) askToken(env []string, host string) <-chan helperAnswer {
	done := make(chan helperAnswer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, suite.bin, "git-credential", "get")
		cmd.Env = env
		cmd.Stdin = strings.NewReader("protocol=https\nhost=" + host + "\n\n")
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("%w: %s", err, stderr.String())
		}
		done <- helperAnswer{out.String(), err}
	}()
	return done
}

// answer waits for the helper's answer, within the test's deadline.
func answer(t *testing.T, done <-chan helperAnswer) helperAnswer {
	t.Helper()
	select {
	case a := <-done:
		return a
	case <-time.After(wait):
		t.Fatal("git-credential did not answer")
		return helperAnswer{}
	}
}

// tokenCred adds a token for github.com over the API and returns its id.
func (e *env) tokenCred(t *testing.T, name, token string) string {
	t.Helper()
	var res struct{ Credential credential }
	must(t, e.api.Do(e.ctx, "POST", "/api/hub/credentials/token", map[string]any{"name": name, "host": "github.com",
		"username": "ann", "token": token, "capabilities": []string{"https-git"}}, &res))
	return res.Credential.ID
}

// approvalJS is an expression for the waiting use whose text holds all of words.
func approvalJS(words ...string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.approval')].find((el) => %s.every((w) => el.innerText.includes(w)))`, browsertest.JS(strings.Join(words, "\x00"))+`.split('\x00')`)
}

// The flow: assign with "Ask every time" in the dialog; the held
// use shows on another page with what it is for, is announced, and Allow
// (reached with Tab, pressed with Enter) hands the token over; on a
// phone, Deny refuses the next one; the log shows both, newest first,
// with who decided.
func TestBrowserCredentialUseWaitsForTheOwnersAnswer(t *testing.T) {
	t.Parallel() // one of the longest (browser_test.go)
	if runtime.GOOS != "linux" {
		t.Skip("reads the session's environment from /proc")
	}
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "alpha"), "Alpha", true)
	is.NoErr(err) // registered and started
	const token = "ghp_heldTokenValue0123456789abcdef0123"
	e.tokenCred(t, "GitHub token", token)

	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	row := credRow(p, t, "GitHub token")
	must(t, p.ClickText(row, "Assign GitHub token"))
	must(t, p.Wait(`document.querySelector('dialog[open] select').value === `+browsertest.JS(id), wait))
	is.True(strings.Contains(p.Text(`dialog[open] .policy-field`), "Ask once per session")) // the three policies, explained
	must(t, p.Click(`dialog[open] input[name=usePolicy][value=ask-every-time]`))
	must(t, p.ClickText(`dialog[open]`, "Assign"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .policy-select`)+`)?.value === 'ask-every-time'`, wait))
	is.Equal(e.credentials(t)[0].Assignments[0].UsePolicy, "ask-every-time") // the Hub keeps it

	// The workspace takes it at its restart (from its page); then the
	// session's git asks, and the dashboard shows it on any page.
	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.ClickText(`.ws-restart`, "Restart"))
	must(t, p.Wait(`!document.querySelector('.ws-restart') && document.querySelector('.ws-head .badge').innerText.trim() === 'Running'`, wait))
	env, err := e.hub.SessionEnv(id)
	is.NoErr(err) // the session's environment
	got := e.askToken(env, "github.com")
	if err := p.Wait(approvalJS("Alpha", "GitHub token", "a token for github.com"), wait); err != nil {
		select {
		case a := <-got:
			t.Fatalf("the helper answered without waiting: %q %v", a.out, a.err)
		default:
			t.Fatal(err)
		}
	}
	is.True(strings.Contains(p.Text(`.approval time`), "ago")) // how long it has waited
	must(t, p.Wait(`document.getElementById('announce').textContent.includes('Alpha asks to use GitHub token: a token for github.com')`, wait))
	select {
	case a := <-got:
		t.Fatalf("the helper answered before the owner did: %+v", a)
	default:
	}

	// From the keyboard: Tab from the header's first link reaches Allow.
	allow := `.approval button[aria-label="Allow Alpha to use GitHub token: a token for github.com"]`
	must(t, p.Wait(`(document.querySelector('a.brand').focus(), document.activeElement.matches('a.brand'))`, wait))
	for i := 0; ; i++ {
		if i == 20 {
			t.Fatal("Tab never reached the Allow button")
		}
		must(t, p.Do(chromedp.KeyEvent("\t")))
		if on, _ := browsertest.Eval[bool](p, `document.activeElement === document.querySelector(`+browsertest.JS(allow)+`)`); on {
			break
		}
	}
	must(t, p.Do(chromedp.KeyEvent("\r")))
	a := answer(t, got)
	is.NoErr(a.err)                                                // the helper succeeded
	is.True(strings.Contains(a.out, "password="+token+"\n"))       // with the token
	is.True(strings.Contains(a.out, "username=ann\n"))             // and its user name
	must(t, p.Wait(`!document.querySelector('.approvals')`, wait)) // and the banner is gone
	noSecrets(t, p, token)

	// On a phone: the next use waits, the banner fits, Deny refuses it.
	phone := e.page(t, browsertest.Phone)
	must(t, phone.LogIn(e.hub))
	openCredentials(t, phone)
	got = e.askToken(env, "github.com")
	must(t, phone.Wait(approvalJS("Alpha", "GitHub token"), wait))
	must(t, p.Wait(approvalJS("Alpha", "GitHub token"), wait)) // the desktop sees it too
	must(t, phone.Wait(`document.documentElement.scrollWidth <= window.innerWidth`, wait))
	must(t, phone.Wait(`(() => { const r = document.querySelector('.approval .btn-danger-quiet').getBoundingClientRect(),
		nav = document.querySelector('nav.nav').getBoundingClientRect();
		return r.right <= window.innerWidth && r.top >= 0 && r.bottom <= nav.top; })()`, wait)) // Deny shows, above the tab bar
	must(t, phone.ClickText(`.approvals`, "Deny Alpha the use of GitHub token: a token for github.com"))
	a = answer(t, got)
	is.True(!strings.Contains(a.out, token))                       // nothing handed over
	is.True(!strings.Contains(a.out, "password="))                 // not even an empty one
	must(t, p.Wait(`!document.querySelector('.approvals')`, wait)) // answered for every page

	// The log, on the phone: both uses, newest first, with who decided.
	row = credRow(phone, t, "GitHub token")
	must(t, phone.ClickText(row, "Use log of GitHub token"))
	must(t, phone.Wait(`document.querySelectorAll('.use').length === 2`, wait))
	uses, err := browsertest.Eval[[]string](phone, `[...document.querySelectorAll('.use')].map((el) => el.innerText)`)
	is.NoErr(err)                                                // read
	is.True(strings.Contains(uses[0], "Denied by "+e.hub.User))  // the newest: denied, by whom
	is.True(strings.Contains(uses[1], "Allowed by "+e.hub.User)) // then allowed, by whom
	is.True(strings.Contains(uses[0], "Alpha"))                  // by the workspace's name
	is.True(strings.Contains(uses[1], "a token for github.com")) // what for
	must(t, phone.Wait(`document.documentElement.scrollWidth <= window.innerWidth`, wait))
	noSecrets(t, phone, token)
	noSecrets(t, p, token)
}

// holdApprovalReads makes the page's reads of the waiting uses wait until
// releaseApprovalReads: what the page shows stays as it is while another
// device answers, so the page's own answer comes second, for certain.
const holdApprovalReads = `(() => {
  const real = window.fetch;
  const held = [];
  window.fetch = (url, init) => (String(url).endsWith('/api/hub/credential-approvals') && init?.method === 'GET'
    ? new Promise((resolve) => held.push(() => resolve(real(url, init)))) : real(url, init));
  window.releaseApprovalReads = () => { window.fetch = real; held.splice(0).forEach((go) => go()); return true; };
  return true;
})()`

// A policy changes from the assignment's row, at once and without a
// restart; the use log starts empty; a use answered on another device no
// longer waits, the page's late answer says so, and the open log shows
// the use.
func TestBrowserCredentialUseAnsweredElsewhereNoLongerWaits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the session's environment from /proc")
	}
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "beta"), "Beta", false)
	is.NoErr(err) // registered
	const token = "glpat-elsewhereTokenValue0123456789"
	cred := e.tokenCred(t, "Work token", token)
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/credentials/"+cred+"/assign", map[string]any{"workspaceId": id,
		"role": "authentication", "host": "github.com", "usePolicy": "ask-once"}, nil)) // asks once
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/sessions/"+id+"/start", nil, nil)) // started with it
	env, err := e.hub.SessionEnv(id)
	is.NoErr(err) // the session's environment

	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	row := credRow(p, t, "Work token")
	sel := row + ` .policy-select`
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(sel)+`).value === 'ask-once'`, wait))
	must(t, p.Wait(`(() => { const s = document.querySelector(`+browsertest.JS(sel)+`);
		s.value = 'ask-every-time'; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`, wait))
	must(t, p.Wait(`document.getElementById('announce').textContent.includes('Work token in Beta: Ask every time')`, wait))
	is.Equal(e.credentials(t)[0].Assignments[0].UsePolicy, "ask-every-time") // changed at the Hub
	var state struct {
		Workspaces []struct {
			CredentialRestartRequired bool `json:"credentialRestartRequired"`
		} `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state)) // the Hub's view
	is.True(!state.Workspaces[0].CredentialRestartRequired)         // no restart for a policy

	must(t, p.ClickText(row, "Use log of Work token"))
	must(t, p.Wait(`document.querySelector('.use-empty')?.innerText.startsWith('No use yet')`, wait))

	got := e.askToken(env, "github.com")
	must(t, p.Wait(approvalJS("Beta", "Work token", "a token for github.com"), wait))
	must(t, p.Wait(holdApprovalReads, wait))
	var list struct {
		Approvals []struct{ ID string } `json:"approvals"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/credential-approvals", nil, &list)) // another device lists it
	is.Equal(len(list.Approvals), 1)                                              // one waits
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/credential-approvals/"+list.Approvals[0].ID,
		map[string]bool{"allow": true}, nil)) // and allows it
	a := answer(t, got)
	is.NoErr(a.err)                                          // the helper succeeded
	is.True(strings.Contains(a.out, "password="+token+"\n")) // with the token
	must(t, p.ClickText(`.approvals`, "Deny Beta the use of Work token: a token for github.com"))
	must(t, p.Wait(`document.querySelector('.approvals-gone')?.innerText.includes('no longer waits')`, wait))
	must(t, p.Wait(`window.releaseApprovalReads()`, wait))
	must(t, p.Wait(`!document.querySelector('.approval')`, wait))
	must(t, p.ClickText(`.approvals`, "Dismiss"))
	must(t, p.Wait(`!document.querySelector('.approvals')`, wait))

	// The open log follows: the one use, allowed by the other device's user.
	must(t, p.Wait(`document.querySelectorAll('.use').length === 1`, wait))
	is.True(strings.Contains(p.Text(`.use`), "Allowed by "+e.hub.User)) // who decided
	noSecrets(t, p, token)
}
