package web_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// agentsHub serves an in-process Hub whose agent logins are logins (the
// fake agents of the tests), with its state in a short folder.
func agentsHub(t *testing.T, logins hub.AgentLogins, opts ...browsertest.Option) *browsertest.InProcess {
	t.Helper()
	needBrowser(t)
	dir, err := os.MkdirTemp("", "wa")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ip, err := browsertest.StartInProcess(t.Context(), dir, append(opts, browsertest.WithAgentLogins(logins))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ip.Close)
	return ip
}

// card is the selector of agent id's card on the Agents page.
func card(id string) string { return `section.acct-agent[data-agent=` + id + `]` }

// noSecret is a JavaScript condition that holds when none of secrets is
// in the page's markup, in the value of any of its inputs, or in its
// local or session storage.
func noSecret(secrets ...string) string {
	return `(() => {
  const secrets = ` + jsList(secrets) + `;
  const stored = [localStorage, sessionStorage].flatMap((s) => Object.keys(s).map((k) => k + '=' + s.getItem(k))).join('\n');
  const values = [...document.querySelectorAll('input, textarea, select')].map((el) => el.value).join('\n');
  const page = document.documentElement.outerHTML + '\n' + document.body.innerText;
  return secrets.every((s) => !page.includes(s) && !values.includes(s) && !stored.includes(s));
})()`
}

func jsList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = browsertest.JS(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// The Agents page logs a fake agent in every way it offers, at a
// phone's width and a desktop's: a refused key says why beside the key
// input, which no longer holds it; an accepted one is listed, active; a
// code login opens the provider's page in a new tab and completes with
// the code it shows; a redirect login with the address the browser
// landed on (requested once on the Hub machine); a device login shows
// the code to enter and completes when the person approves, which the
// page learns by reading again; a login can be cancelled; a saved login
// can be made active and logged out. No key, code or address stays in
// the page or in its storage.
func TestBrowserAgentsPageLogsAnAgentIn(t *testing.T) {
	t.Parallel() // one of the longest (browser_test.go)
	for _, screen := range []browsertest.Screen{browsertest.Phone, browsertest.Desktop} {
		t.Run(screen.Name, func(t *testing.T) {
			is := is.New(t)
			fa := fakes.NewFakeAgent("fake", "Fake Agent")
			ip := agentsHub(t, fakes.NewAgentLogins(fa))
			p := openPage(t, screen)
			must(t, p.LogIn(ip.Hub))
			must(t, p.ClickText(`nav.nav`, "Agents"))
			must(t, p.Wait(`location.pathname === '/agents' && document.querySelector(`+browsertest.JS(card("fake"))+`)`, wait))
			must(t, p.Wait(cardSays("fake", "Ready")+` && `+cardSays("fake", "1.0.0")+` && `+cardSays("fake", "No saved login"), wait))
			must(t, p.Wait(fitsIn(screen), wait)) // fits the screen
			must(t, p.Wait(navFits, wait))        // and so do the tabs

			// A refused key: the agent's words (the key in them redacted)
			// beside the key input, which is empty again.
			const wrong, right = "wrong-key-31337", "sk-right-27182"
			must(t, p.ClickText(card("fake"), "API key"))
			keyInput := `form[data-method=api-key] input[name=key]`
			must(t, p.Type(keyInput, wrong))
			must(t, p.Type(`form[data-method=api-key] input[name=region]`, "eu-west"))
			must(t, p.ClickText(`form[data-method=api-key]`, "Log in"))
			must(t, p.Wait(describedBy(keyInput)+`.includes('refused the key [redacted]')`, wait)) // by the key field
			is.Equal(attr(t, p, keyInput, "aria-invalid"), "true")                                 // marked invalid
			must(t, p.Wait(noSecret(wrong), wait))                                                 // the key is nowhere
			region, err := browsertest.Eval[string](p, `document.querySelector('form[data-method=api-key] input[name=region]').value`)
			is.NoErr(err)
			is.Equal(region, "eu-west") // what was not secret stays

			// An accepted key: listed, active.
			must(t, p.Type(keyInput, right))
			must(t, p.ClickText(`form[data-method=api-key]`, "Log in"))
			must(t, p.Wait(credSays("key-", "Active")+` && `+credSays("key-", "API key"), wait))
			must(t, p.Wait(cardSays("fake", "Logged in with the key"), wait))
			must(t, p.Wait(noSecret(wrong, right), wait))

			// A code login: the provider's page opens in a new tab, with
			// neither opener nor referrer; a wrong code fails the login
			// with the agent's words (the code in them redacted), the
			// right one finishes the next.
			must(t, p.ClickText(card("fake"), "Log in (code)"))
			link := card("fake") + ` .attempt-pending a[target=_blank]`
			must(t, p.Wait(`document.querySelector(`+browsertest.JS(link)+`)`, wait))
			is.Equal(attr(t, p, link, "rel"), "noopener noreferrer")                                                      // no opener, no referrer
			must(t, p.Wait(`document.activeElement === document.querySelector('.attempt-pending .attempt-title')`, wait)) // focus moved to the next step
			const badCode = "code-not-this-one"
			must(t, p.Type(`.attempt-pending input[name=code]`, badCode))
			must(t, p.ClickText(`.attempt-pending`, "Submit"))
			must(t, p.Wait(`document.querySelector('.attempt-failed [role=alert]') && document.querySelector('.attempt-failed [role=alert]').innerText.includes('The login failed: The code [redacted] is not the one')`, wait))
			must(t, p.Wait(noSecret(badCode), wait))
			must(t, p.ClickText(card("fake"), "Log in (code)"))
			must(t, p.Wait(`document.querySelector(`+browsertest.JS(link)+`) && !document.querySelector('.attempt-failed')`, wait))
			state := stateOf(t, attr(t, p, link, "href"))
			code := "code-" + state
			must(t, p.Type(`.attempt-pending input[name=code]`, code))
			// The Hub reads the agent's saved logins back before it
			// answers a finished login: the answer lists the new one.
			must(t, p.ClickText(`.attempt-pending`, "Submit"))
			must(t, p.Wait(cardSays("fake", "✓ Logged in.")+` && document.querySelector('.attempt-complete')`, wait))
			must(t, p.Wait(credSays("oauth-", "Active")+` && !`+credSays("key-", "Active"), wait)) // the new login is the active one
			must(t, p.Wait(noSecret(code), wait))

			// A redirect login: the address the browser landed on.
			must(t, p.ClickText(card("fake"), "Log in (browser)"))
			must(t, p.Wait(`document.querySelector('.attempt-pending input[name=address]')`, wait))
			must(t, p.Wait(cardSays("fake", "lands on a page that does not load"), wait)) // says why the page fails, and what to do
			state = stateOf(t, attr(t, p, link, "href"))
			elsewhere := "http://attacker.example/auth/callback?code=code-" + state
			must(t, p.Type(`.attempt-pending input[name=address]`, elsewhere))
			must(t, p.ClickText(`.attempt-pending`, "Submit"))
			must(t, p.Wait(describedBy(`.attempt-pending input[name=address]`)+` !== ''`, wait)) // refused, by the address field
			is.Equal(len(fa.Delivered()), 0)                                                     // and never requested
			must(t, p.Wait(noSecret(elsewhere), wait))
			address := fakes.FakeCallback + "?code=code-" + state + "&state=" + state
			must(t, p.Type(`.attempt-pending input[name=address]`, address))
			must(t, p.ClickText(`.attempt-pending`, "Submit"))
			must(t, p.Wait(`document.querySelector('.attempt-complete') && !document.querySelector('.attempt-pending')`, wait))
			is.Equal(fa.Delivered(), []string{address}) // requested once, as pasted
			must(t, p.Wait(noSecret(address, "code-"+state), wait))

			// A device login: the code to enter, then the approval, which
			// the page learns by itself.
			must(t, p.ClickText(card("fake"), "Log in (device)"))
			must(t, p.Wait(`document.querySelector('.attempt-pending .copy-big input') && document.querySelector('.attempt-pending .copy-big input').value.startsWith('ABCD-')`, wait))
			must(t, p.Wait(cardSays("fake", "Waiting for you to approve"), wait))
			must(t, p.Wait(fitsIn(screen), wait)) // the big code too
			is.True(fa.Approve())                 // the person approves on the provider's page
			must(t, p.Wait(`document.querySelector('.attempt-complete') && !document.querySelector('.attempt-pending')`, wait))

			// Cancel.
			must(t, p.ClickText(card("fake"), "Log in (code)"))
			must(t, p.Wait(`document.querySelector('.attempt-pending input[name=code]')`, wait))
			must(t, p.ClickText(`.attempt-pending`, "Cancel"))
			must(t, p.Wait(`document.querySelector('.attempt-cancelled') && !document.querySelector('.attempt-pending')`, wait))
			must(t, p.ClickText(`.attempt-cancelled`, "Dismiss"))
			must(t, p.Wait(`!document.querySelector('.attempt')`, wait))

			// Make the key active again, then log it out.
			label := p.Text(`[data-cred^="key-"] .acct-cred-label`)
			must(t, p.ClickText(card("fake"), "Make "+label+" active"))
			must(t, p.Wait(credSays("key-", "Active"), wait))
			must(t, p.ClickText(card("fake"), "Log out "+label))
			must(t, p.ClickText(`dialog[open]`, "Log out"))
			must(t, p.Wait(`!document.querySelector('dialog[open]') && !document.querySelector('[data-cred^="key-"]')`, wait))
			must(t, p.Wait(`document.querySelectorAll('.acct-cred').length === 3`, wait)) // the browser logins stay
			must(t, p.Wait(fitsIn(screen), wait))
		})
	}
}

// An agent whose command is not installed says so, naming the command
// and the terminal command that logs it in; one whose login interface
// is slow to start shows it starting, then ready, reading again by
// itself; one whose interface fails says why and tries again on demand.
func TestBrowserAgentsPageShowsEachAgentsState(t *testing.T) {
	is := is.New(t)
	missing := fakes.NewFakeAgent("missing", "Missing Agent")
	missing.SetInstalled(false)
	slow := fakes.NewFakeAgent("slow", "Slow Agent")
	slow.Hold()
	t.Cleanup(slow.Release)
	broken := fakes.NewFakeAgent("broken", "Broken Agent")
	broken.FailStatus(errors.New("the status read failed"))
	ip := agentsHub(t, fakes.NewAgentLogins(missing, slow, broken))
	p := openPage(t, browsertest.Phone)
	must(t, p.LogIn(ip.Hub))
	must(t, p.Go(ip.URL+"agents?agent=slow"))

	must(t, p.Wait(cardSays("slow", "Starting")+` && document.querySelector(`+browsertest.JS(card("slow")+` .spinner`)+`)`, wait))
	must(t, p.Wait(`document.activeElement === document.querySelector('#agent-slow')`, wait)) // the agent asked for, in focus
	must(t, p.Wait(cardSays("missing", "Not installed")+` && `+cardSays("missing", "`missing` was not found")+` && `+cardSays("missing", "missing login"), wait))
	must(t, p.Wait(cardSays("broken", "Unavailable")+` && `+cardSays("broken", "did not start"), wait))
	slow.Release()
	must(t, p.Wait(cardSays("slow", "Ready")+` && document.querySelector(`+browsertest.JS(card("slow")+` details[data-method=api-key]`)+`)`, wait))

	broken.FailStatus(nil)
	must(t, p.ClickText(card("broken"), "Try again"))
	must(t, p.Wait(cardSays("broken", "Ready"), wait))
	is.True(slow.Starts() == 1) // started once, however often the page read
	must(t, p.Wait(fitsIn(browsertest.Phone), wait))
}

// fitsIn holds when the page is no wider than screen s. (A mobile browser
// widens its layout viewport to content wider than the screen, so the
// page's width alone says nothing.)
func fitsIn(s browsertest.Screen) string {
	return fmt.Sprintf(`document.documentElement.scrollWidth <= window.innerWidth && window.innerWidth <= %d`, s.Width)
}

// navFits holds when every tab of the navigation is within the screen
// and shows its whole label.
const navFits = `[...document.querySelectorAll('nav.nav .nav-link')].every((a) => {
  const r = a.getBoundingClientRect(), label = a.querySelector('span');
  return r.left >= 0 && r.right <= window.innerWidth && label.scrollWidth <= label.clientWidth;
})`

// cardSays holds when agent id's card says text.
func cardSays(id, text string) string {
	return `(document.querySelector(` + browsertest.JS(card(id)) + `) || {innerText: ''}).innerText.includes(` + browsertest.JS(text) + `)`
}

// credSays holds when the saved login whose id starts with prefix says text.
func credSays(prefix, text string) string {
	return `(() => { const c = document.querySelector('[data-cred^="` + prefix + `"]'); return !!c && c.innerText.includes(` + browsertest.JS(text) + `); })()`
}

// describedBy is the text of what the element sel matches names in its
// aria-describedby.
func describedBy(sel string) string {
	return `((document.getElementById(document.querySelector(` + browsertest.JS(sel) + `).getAttribute('aria-describedby')) || {innerText: ''}).innerText)`
}

// attr is the attribute name of the element sel matches.
func attr(t *testing.T, p *browsertest.Page, sel, name string) string {
	t.Helper()
	v, err := browsertest.Eval[string](p, `document.querySelector(`+browsertest.JS(sel)+`).getAttribute(`+browsertest.JS(name)+`) || ''`)
	must(t, err)
	return v
}

// stateOf is the state parameter of a login page's address.
func stateOf(t *testing.T, href string) string {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil || u.Query().Get("state") == "" {
		t.Fatalf("no state in the login page's address %q", href)
	}
	return u.Query().Get("state")
}
