package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// At a phone's 390 px every page fits the width (no sideways scrolling,
// nor a layout viewport widened to fit) and the navigation sits at the
// bottom, within reach of a thumb, every tab showing its whole label.
func TestBrowserPhoneLayout(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "a-workspace-with-a-rather-long-folder-name-that-must-not-overflow"),
		"A workspace with a rather long display name that wraps", true)
	is.NoErr(err) // registered
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	fits := fitsIn(browsertest.Phone)
	for _, c := range []struct{ path, ready string }{
		{"", rowOf(id)},
		{"w/" + id, `document.querySelector('.tree-file')`},
		{"add?path=" + e.home, `document.querySelector('.dir')`},
		{"agents", `document.querySelector('main section.acct-agent')`},
		{"settings", `document.querySelector('.sessions li')`},
	} {
		must(t, p.Go(e.hub.URL+c.path))
		must(t, p.Wait(c.ready, wait))
		must(t, p.Wait(fits, wait))
		must(t, p.Wait(navFits, wait))
		must(t, p.Wait(`(() => { const r = document.querySelector('nav.nav').getBoundingClientRect(); return r.bottom >= window.innerHeight - 1 && r.top > window.innerHeight / 2; })()`, wait))
	}
	must(t, p.Go(e.hub.URL+"login"))
	must(t, p.Wait(fits, wait))
}

// The dashboard works from the keyboard: a dialog takes focus, Escape
// closes it, and focus returns to the button that opened it.
func TestBrowserKeyboardDialog(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "keys"), "Keys", false)
	is.NoErr(err) // registered
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Wait(rowOf(id), wait))
	rename := row(id) + ` button[aria-label="Rename Keys"]`
	must(t, p.Do(chromedp.Focus(chromedp.CSS(rename)), chromedp.KeyEvent("\r")))
	must(t, p.Wait(`document.querySelector('dialog[open]') && document.activeElement.tagName === 'INPUT' && document.activeElement.value === 'Keys'`, wait))
	must(t, p.Do(chromedp.KeyEvent(kb.Escape)))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && document.activeElement === document.querySelector(`+browsertest.JS(rename)+`)`, wait))

	// Rename from the keyboard: type, Enter, and the list shows it.
	must(t, p.Do(chromedp.KeyEvent("\r")))
	must(t, p.Wait(`document.querySelector('dialog[open] input') === document.activeElement`, wait))
	must(t, p.Do(chromedp.KeyEvent("\b\b\b\bDoors\r")))
	must(t, p.Wait(`!document.querySelector('dialog[open]') && `+rowOf(id)+`.querySelector('.ws-name').innerText === 'Doors'`, wait))
}
