package web_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The list follows each workspace's activity (working, awaiting you,
// finished), tells screen readers when one needs the user, and opening a
// finished workspace acknowledges it. The Hub runs in-process with the
// fake backend, whose workspaces report the activity the test sets.
func TestBrowserActivityBadgesAndAcknowledgement(t *testing.T) {
	t.Parallel() // one of the longest (browser_test.go)
	is := is.New(t)
	needBrowser(t)
	ctx := t.Context()
	dir := t.TempDir()
	ip, err := browsertest.StartInProcess(ctx, dir)
	is.NoErr(err) // the Hub serves
	t.Cleanup(ip.Close)
	api, err := ip.Login(ctx, "curl")
	is.NoErr(err) // logged in
	folder := filepath.Join(dir, "agent")
	is.NoErr(os.Mkdir(folder, 0o755))                   // a folder
	id, err := api.Register(ctx, folder, "Agent", true) // registered, started
	is.NoErr(err)

	p := openPage(t, browsertest.Desktop)
	must(t, p.LogIn(ip.Hub))
	badge := func(want string) string {
		return rowOf(id) + `.querySelector('.badge').innerText.trim() === ` + browsertest.JS(want)
	}
	must(t, p.Wait(badge("Running"), wait))
	ip.Backend.SetActivity(id, true, false)
	must(t, p.Wait(badge("Working"), wait))
	ip.Backend.SetActivity(id, false, true)
	must(t, p.Wait(badge("Awaiting you"), wait))
	must(t, p.Wait(`document.getElementById('announce').innerText.includes('Agent awaits you')`, wait)) // said aloud
	ip.Backend.SetActivity(id, true, false)
	ip.Backend.SetActivity(id, false, false)
	must(t, p.Wait(badge("Finished"), wait))

	must(t, p.Click(row(id)+` .ws-name`))
	must(t, p.Wait(`document.querySelector('.ws-head .badge').innerText.trim() === 'Running'`, wait)) // acknowledged on opening
	must(t, p.Click(`a.back`))
	must(t, p.Wait(badge("Running"), wait)) // for the list too
}
