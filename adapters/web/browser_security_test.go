package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// Text from the API is shown as text: a folder and a display name that
// are HTML show literally, in the list, on the workspace page and in the
// folder browser, and run nothing.
func TestBrowserRendersAPITextAsText(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	const evil = `<img src=x onerror=window.wharfPwned=1>`
	dir := e.repo(t, evil)
	is.NoErr(os.WriteFile(filepath.Join(dir, "<b onclick=window.wharfPwned=1>bold.md"), []byte("x"), 0o644)) // a file name that is HTML too
	id, err := e.api.Register(e.ctx, dir, evil, true)
	is.NoErr(err) // registered
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Wait(rowOf(id), wait))
	is.Equal(p.Text(row(id)+` .ws-name`), evil)                       // the display name, literally
	is.True(strings.HasSuffix(p.Text(row(id)+` .ws-path`), "/"+evil)) // the path, literally
	noImages := `document.querySelectorAll('main img').length === 0 && !window.wharfPwned`
	must(t, p.Wait(noImages, wait))

	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('.tree-file[data-path="<b onclick=window.wharfPwned=1>bold.md"]')`, wait))
	is.Equal(p.Text(`h1`), evil)                                                                                                            // the heading, literally
	is.Equal(p.Text(`.tree-file[data-path="<b onclick=window.wharfPwned=1>bold.md"] .tree-name`), "<b onclick=window.wharfPwned=1>bold.md") // the file name, literally
	must(t, p.Wait(noImages+` && !document.querySelector('main b')`, wait))

	must(t, p.Go(e.hub.URL+"add?path="+e.home))
	must(t, p.Wait(`[...document.querySelectorAll('.dir-name')].some(a => a.innerText.trim() === `+browsertest.JS(evil)+`)`, wait))
	must(t, p.Wait(noImages, wait))
}

// A forged session cookie gets the login page, not the dashboard.
func TestBrowserRefusesForgedCookie(t *testing.T) {
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	yes := true
	port := e.hub.URL[strings.LastIndex(e.hub.URL, ":")+1 : len(e.hub.URL)-1]
	_, err := chromedp.Call(p.Ctx, network.SetCookie, network.SetCookieParams{
		Name: "wharf_hub_" + port, Value: strings.Repeat("A", 43), URL: e.hub.URL, HTTPOnly: &yes,
	})
	must(t, err)
	must(t, p.Go(e.hub.URL+"settings"))
	must(t, p.Wait(`location.pathname === '/login' && new URLSearchParams(location.search).get('next') === '/settings'`, wait))
}

// A page of another origin can neither post to the Hub with the user's
// cookie nor frame the dashboard.
func TestBrowserRefusesOtherOrigins(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "keep"), "Keep me", false)
	is.NoErr(err) // registered

	// The attacker: another port on the same host is another origin (but
	// the same site, so the Lax cookie goes along: only the Hub's
	// same-origin check stands in the way).
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/post":
			fmt.Fprintf(w, `<form method="post" action="%sapi/hub/workspaces/%s/forget"></form>
<script>addEventListener('load', () => setTimeout(() => document.forms[0].submit()))</script>`, e.hub.URL, id)
		case "/frame":
			fmt.Fprintf(w, `<iframe src="%s" width="600" height="400"></iframe>`, e.hub.URL)
		}
	}))
	defer evil.Close()

	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Do(chromedp.Navigate(evil.URL+"/post")))
	must(t, p.Wait(`document.body && document.body.innerText.includes('cross-origin request rejected')`, wait))
	var state struct {
		Workspaces []struct{ ID string } `json:"workspaces"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/state", nil, &state)) // the Hub's view
	is.Equal(len(state.Workspaces), 1)                              // nothing was forgotten

	must(t, p.Do(chromedp.Navigate(evil.URL+"/frame")))
	must(t, p.Wait(`document.querySelector('iframe')`, wait))
	tree, err := chromedp.Call(p.Ctx, page.GetFrameTree, cdp.Empty{})
	is.NoErr(err)                                // the frames
	is.Equal(len(tree.FrameTree.ChildFrames), 1) // one iframe
	child := tree.FrameTree.ChildFrames[0].Frame
	t.Logf("the frame: url %q, unreachable %q", child.URL, child.UnreachableURL)
	is.True(strings.HasPrefix(child.URL, "chrome-error:") && child.UnreachableURL == e.hub.URL) // the browser refused to frame the dashboard
}

// An expired or revoked session lands on the login page, which says so,
// and logging in again returns to the page the user was on.
func TestBrowserExpiredSessionReturns(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "gamma"), "Gamma", false)
	is.NoErr(err) // registered
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('h1').innerText === 'Gamma' && document.querySelector('.live-on')`, wait))

	// Another device signs this browser out (Settings would do the same).
	var list struct {
		Sessions []struct {
			Handle, DeviceLabel string
			Current             bool
		} `json:"sessions"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/sessions", nil, &list)) // the devices
	revoked := 0
	for _, s := range list.Sessions {
		if !s.Current {
			is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/sessions/"+s.Handle+"/revoke", nil, nil)) // revoked
			revoked++
		}
	}
	is.Equal(revoked, 1) // the browser's session

	// The Hub ends the stream of a revoked session at its next keepalive;
	// any request tells sooner (the page's own reads may have told it
	// already: its worktrees section reads when the stream reattaches).
	// Either way the page goes to the login. A click on Start, while it
	// is still there, is one such request.
	_, err = browsertest.Eval[bool](p, `(() => { const b = [...document.querySelectorAll('.ws-head button')].find((b) => b.innerText.includes('Start')); if (b) b.click(); return true })()`)
	must(t, err)
	must(t, p.Wait(`location.pathname === '/login'`, wait))
	must(t, p.Wait(`document.body.innerText.includes('Your session ended')`, wait))
	must(t, p.Type(`input[name=password]`, e.hub.Password))
	must(t, p.Do(chromedp.Click(chromedp.CSS(`button[type=submit]`))))
	must(t, p.Wait(`location.pathname === '/w/`+id+`' && document.querySelector('h1').innerText === 'Gamma'`, wait))
}

// Too many failed logins answer 429: the page says to wait, and how long.
func TestBrowserLoginLimitShowsWait(t *testing.T) {
	e := newEnv(t)
	p := e.page(t, browsertest.Phone)
	must(t, p.Go(e.hub.URL+"login"))
	must(t, p.Type(`input[name=username]`, e.hub.User))
	for i := 0; ; i++ {
		if i == 12 {
			t.Fatal("no 429 after 12 failed logins")
		}
		must(t, p.Type(`input[name=password]`, "wrong password"))
		must(t, p.Do(chromedp.Click(chromedp.CSS(`button[type=submit]`))))
		must(t, p.Wait(`document.querySelector('[role=alert]') && !document.querySelector('button[type=submit]').innerText.includes('Logging in')`, wait))
		if strings.Contains(p.Text(`[role=alert]`), "Too many attempts") {
			break
		}
		must(t, p.Wait(`document.querySelector('[role=alert]').innerText.includes('do not match')`, wait))
	}
	must(t, p.Wait(`/^Wait \d+ s$/.test(document.querySelector('button[type=submit]').innerText.trim())`, wait))
	must(t, p.Wait(`document.querySelector('button[type=submit]').disabled`, wait))
}
