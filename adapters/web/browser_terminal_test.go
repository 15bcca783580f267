package web_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// A shell from a phone, end to end through the Hub and the workspace
// child: open one, type `echo hello` and see it, reload and see it again
// (the child's scrollback), rotate the phone and see the PTY follow
// (`stty size`), interrupt a command with the key bar's Ctrl and complete
// a name with its Tab, then close the shell. The page never trips its
// Content-Security-Policy.
func TestBrowserAShellWorksFromAPhone(t *testing.T) {
	is := is.New(t)
	e, ws := newShellEnv(t)
	p := e.page(t, browsertest.Phone)
	watchPolicy(t, p)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+ws))
	openShell(t, p)
	must(t, p.Wait(`document.querySelector('.term-keys[role=toolbar]')`, wait)) // the key bar, on a phone

	typeLine(t, p, "echo hello")
	must(t, p.Wait(termLine("hello"), wait)) // the output

	must(t, p.Go(e.hub.URL+"w/"+ws))
	must(t, p.Wait(`document.querySelector('.term-panel[data-state=live]')`, wait)) // the same shell, attached again
	must(t, p.Wait(termLine("hello"), wait))                                        // its screen replayed

	portrait := sttySize(t, p)
	must(t, p.Do(chromedp.EmulateViewport(844, 390, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch)))
	must(t, p.Wait(fmt.Sprintf(`document.querySelector('.term-host').dataset.cols !== %q`, portrait[1]), wait)) // the screen refits
	landscape := sttySize(t, p)
	is.True(landscape[1] != portrait[1]) // the PTY has the new width
	must(t, p.Emulate(browsertest.Phone))
	must(t, p.Wait(fmt.Sprintf(`document.querySelector('.term-host').dataset.cols === %q`, portrait[1]), wait))
	is.Equal(sttySize(t, p), portrait) // and back

	typeLine(t, p, "sleep 60")
	must(t, p.Click(`.term-key[aria-pressed]`))
	must(t, p.Wait(`document.querySelector('.term-key[aria-pressed=true]')`, wait)) // Ctrl armed
	typeKeys(t, p, "c")
	must(t, p.Wait(`document.querySelector('.term-key[aria-pressed=false]')`, wait)) // and released
	typeLine(t, p, "echo interrupted")
	must(t, p.Wait(termLine("interrupted"), wait)) // sleep ended at once

	typeKeys(t, p, "cat uniq")
	must(t, p.Click(`.term-key[aria-label=Tab]`))
	typeKeys(t, p, "\r")
	must(t, p.Wait(termLine("completed by tab"), wait)) // the name was completed

	closeShell(t, e, p, ws)
}

// The same shell from a desktop browser, through a network that drops:
// no key bar; the page reattaches by itself and resumes where it was
// (its screen kept, not reset; output made meanwhile shown once);
// resizing the window resizes the PTY.
func TestBrowserAShellWorksFromADesktop(t *testing.T) {
	is := is.New(t)
	e, ws := newShellEnv(t)
	proxy, err := browsertest.NewProxy(e.hub.URL)
	is.NoErr(err) // a network between the page and the Hub
	t.Cleanup(proxy.Close)
	via := *e.hub
	via.URL = proxy.URL
	p := e.page(t, browsertest.Desktop)
	watchPolicy(t, p)
	must(t, p.LogIn(&via))
	must(t, p.Go(via.URL+"w/"+ws))
	openShell(t, p)
	typeLine(t, p, "echo hello")
	must(t, p.Wait(termLine("hello"), wait))
	ok, err := browsertest.Eval[bool](p, `!document.querySelector('.term-keys')`)
	is.NoErr(err)
	is.True(ok) // no key bar on a desktop

	typeLine(t, p, "(sleep 1; echo later)")
	must(t, p.Wait(ran("(sleep 1; echo later)"), wait)) // the shell has it
	proxy.Cut()
	must(t, p.Wait(`document.querySelector('.term-panel:not([data-state=live])')`, wait)) // it noticed
	must(t, p.Wait(`document.querySelector('.term-panel[data-state=live]')`, wait))       // and reattached
	must(t, p.Wait(termLine("later"), wait))
	typeLine(t, p, "echo again")
	must(t, p.Wait(termLine("again"), wait))
	n, err := browsertest.Eval[int](p, `[...document.querySelectorAll('.term-host .xterm-rows > div')].filter((r) => r.textContent.trim() === 'later').length`)
	is.NoErr(err)
	is.Equal(n, 1) // shown once
	resets, err := browsertest.Eval[string](p, `document.querySelector('.term-host').dataset.resets || '0'`)
	is.NoErr(err)
	is.Equal(resets, "0") // resumed: the screen was kept
	must(t, p.Wait(termLine("hello"), wait))

	wide := sttySize(t, p)
	must(t, p.Do(chromedp.EmulateViewport(900, 700)))
	must(t, p.Wait(fmt.Sprintf(`document.querySelector('.term-host').dataset.cols !== %q`, wide[1]), wait))
	narrow := sttySize(t, p)
	is.True(narrow[1] != wide[1]) // the PTY followed the window
	closeShell(t, e, p, ws)
}

// newShellEnv starts a Hub whose shells run bash (for Tab completion) and
// a running workspace with a file to complete.
func newShellEnv(t *testing.T) (*env, string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash: the terminal tests need a shell with completion")
	}
	e := newEnvWith(t, nil, "SHELL="+bash)
	repo := e.repo(t, "proj")
	must(t, os.WriteFile(filepath.Join(repo, "uniquely-named.txt"), []byte("completed by tab\n"), 0o644))
	ws, err := e.api.Register(e.ctx, repo, "Project", true)
	must(t, err)
	return e, ws
}

// watchPolicy records the page's Content-Security-Policy violations from
// its first script on, and fails the test on any.
func watchPolicy(t *testing.T, p *browsertest.Page) {
	t.Helper()
	const js = `window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' at ' + e.sourceFile + ':' + e.lineNumber));`
	_, err := chromedp.Call(p.Ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
	must(t, err)
	t.Cleanup(func() {
		v, err := browsertest.Eval[[]string](p, `window.__violations || []`)
		if err != nil {
			t.Errorf("reading the policy violations: %v", err)
		}
		for _, s := range v {
			t.Errorf("policy violation: %s", s)
		}
	})
}

// openShell opens a new shell from the workspace page and waits for it
// to be attached and drawn.
func openShell(t *testing.T, p *browsertest.Page) {
	t.Helper()
	must(t, p.ClickText(`.term-section`, "New shell"))
	must(t, p.Wait(`document.querySelector('.term-tab[aria-selected=true]') && document.querySelector('.term-panel[data-state=live] .xterm-rows')`, wait))
}

// typeKeys types text into the terminal as a keyboard does
// (browsertest's Page.Keys).
func typeKeys(t *testing.T, p *browsertest.Page, text string) {
	t.Helper()
	must(t, p.Keys(`.term-host .xterm-helper-textarea`, text))
}

// typeLine types a command and Enter.
func typeLine(t *testing.T, p *browsertest.Page, cmd string) {
	t.Helper()
	typeKeys(t, p, cmd+"\r")
}

// termLine is a JavaScript condition: a row of the screen reads text.
func termLine(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.term-host .xterm-rows > div')].some((r) => r.textContent.trim() === %s)`, browsertest.JS(text))
}

// ran is a JavaScript condition: the screen shows cmd on a row above the
// cursor's (the shell got it and its Enter).
func ran(cmd string) string {
	return fmt.Sprintf(`(() => {
  const rows = [...document.querySelectorAll('.term-host .xterm-rows > div')];
  const at = rows.findIndex((r) => r.textContent.includes(%s));
  const cursor = rows.findIndex((r) => r.querySelector('.xterm-cursor'));
  return at >= 0 && cursor > at;
})()`, browsertest.JS(cmd))
}

// sttySize runs `stty size` and returns what the PTY says, [rows, cols],
// once it matches the size the screen shows.
func sttySize(t *testing.T, p *browsertest.Page) [2]string {
	t.Helper()
	size, err := browsertest.Eval[[2]string](p, `[document.querySelector('.term-host').dataset.rows, document.querySelector('.term-host').dataset.cols]`)
	must(t, err)
	typeLine(t, p, "clear; stty size")
	must(t, p.Wait(termLine(size[0]+" "+size[1]), wait))
	return size
}

// closeShell closes the shown shell through its Close button and checks
// the child no longer lists it.
func closeShell(t *testing.T, e *env, p *browsertest.Page, ws string) {
	t.Helper()
	label := p.Text(`.term-tab[aria-selected=true] .term-tab-label`)
	must(t, p.ClickText(`.term-panel`, "Close "+label))
	must(t, p.ClickText(`dialog[open]`, "Close shell"))
	must(t, p.Wait(`!document.querySelector('.term-tab') && !document.querySelector('.term-panel')`, wait))
	var list struct{ Shells []struct{ ID string } }
	must(t, e.api.Do(e.ctx, "GET", "/s/"+ws+"/api/shells", nil, &list))
	if len(list.Shells) != 0 {
		t.Errorf("the child still lists %d shells", len(list.Shells))
	}
	if strings.Contains(p.Text(`.term-section`), label) {
		t.Errorf("the page still shows %s", label)
	}
}
