//go:build linux

package web_test

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The whole way to a signed commit, in the page: generate an SSH key that
// signs, assign it to the workspace as its signing key, unlock it, restart
// the workspace from its page; a commit made in the workspace session
// (git in the session's own environment, as its shell or an agent runs
// it) then shows in Recent commits as verified.
func TestBrowserASignedCommitShowsAsVerified(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	dir := e.repo(t, "signed")
	id, err := e.api.Register(e.ctx, dir, "Signed", true)
	is.NoErr(err) // registered and started
	for _, kv := range [][2]string{{"user.name", "Ann Example"}, {"user.email", "ann@example.com"}} {
		if out, err := exec.Command("git", "-C", dir, "config", kv[0], kv[1]).CombinedOutput(); err != nil {
			t.Fatalf("git config: %v\n%s", err, out) // the repository's identity
		}
	}
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)

	const pass = "ridge-Harbor-73-passphrase"
	must(t, p.ClickText(`.cred-add`, "Generate an SSH key"))
	must(t, p.Type(`dialog[open] input[name=name]`, "signer"))
	must(t, p.Wait(check(`dialog[open] input[value=ssh-signing]`), wait)) // it signs
	must(t, p.Type(`dialog[open] input[name=passphrase]`, pass))
	must(t, p.Type(`dialog[open] input[name=passphrase2]`, pass))
	must(t, p.ClickText(`dialog[open]`, "Generate"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	row := credRow(p, t, "signer")

	must(t, p.ClickText(row, "Assign signer"))
	must(t, p.Wait(`document.querySelector('dialog[open] select')?.value === `+browsertest.JS(id), wait))
	must(t, p.Wait(check(`dialog[open] input[name=role][value=signing]`), wait)) // as the signing key
	must(t, p.ClickText(`dialog[open]`, "Assign"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .assignments`)+`)?.innerText.includes('signs commits')`, wait))

	must(t, p.ClickText(row, "Unlock signer"))
	must(t, p.Type(`dialog[open] input[type=password]`, pass))
	must(t, p.ClickText(`dialog[open]`, "Unlock"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .badge`)+`).innerText.trim() === 'Ready'`, wait))

	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('.ws-restart')?.innerText.includes('Restart required')`, wait))
	must(t, p.ClickText(`.ws-restart`, "Restart"))
	must(t, p.Wait(`!document.querySelector('.ws-restart') && document.querySelector('.ws-head .badge').innerText.trim() === 'Running'`, wait))

	cmd := exec.Command("git", "-C", dir, "commit", "--allow-empty", "-m", "Signed by the Hub")
	env, err := e.hub.SessionEnv(id)
	is.NoErr(err) // the session's own environment
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("git commit in the session: %v\n%s", err, out.String())
	}
	must(t, p.Wait(`[...document.querySelectorAll('.commits li')].some((li) => li.innerText.includes('Signed by the Hub') && li.querySelector('.sig-ok')?.innerText === 'Verified')`, wait))
	noSecrets(t, p, pass)
}

// check is a condition that checks the box or radio button sel, once it
// is there, by clicking it unless it is checked already.
func check(sel string) string {
	return `(() => { const c = document.querySelector(` + browsertest.JS(sel) + `); if (!c) return false; if (!c.checked) c.click(); return c.checked })()`
}
