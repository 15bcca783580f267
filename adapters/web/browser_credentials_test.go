package web_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/gopenpgp/v2/helper"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The Credentials page's own flows, in a real Chromium against a real
// `wharf serve`: every passphrase, private key and token typed here is
// checked absent from the page's DOM, its storage and its address once
// the flow is over (the probe is first shown to find a secret while it is
// still typed, so its silence means something).

// credRow is the CSS selector of the list row of the credential named name.
func credRow(p *browsertest.Page, t *testing.T, name string) string {
	t.Helper()
	must(t, p.Wait(credRowJS(name), wait))
	id, err := browsertest.Eval[string](p, credRowJS(name)+`.dataset.cred`)
	must(t, err)
	return `.cred-row[data-cred="` + id + `"]`
}

func credRowJS(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.cred-row')].find((r) => r.querySelector('.cred-name').innerText === %s)`, browsertest.JS(name))
}

// secretsProbe is everything a page keeps where a secret could be left:
// its markup, the values of its fields, both storages, its address and
// its history entry.
const secretsProbe = `(() => {
  const parts = [document.documentElement.outerHTML, location.href, document.title, JSON.stringify(history.state)];
  for (const el of document.querySelectorAll('input, textarea, select')) parts.push(el.value);
  for (const s of [localStorage, sessionStorage]) for (let i = 0; i < s.length; i++) parts.push(s.key(i), s.getItem(s.key(i)));
  return parts.join('\n');
})()`

// pageHolds reports whether the page keeps secret anywhere secretsProbe looks.
func pageHolds(t *testing.T, p *browsertest.Page, secret string) bool {
	t.Helper()
	all, err := browsertest.Eval[string](p, secretsProbe)
	must(t, err)
	return strings.Contains(all, secret)
}

// noSecrets fails the test for each secret the page still keeps.
func noSecrets(t *testing.T, p *browsertest.Page, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if pageHolds(t, p, s) {
			t.Errorf("the page still holds the secret %q", s)
		}
	}
}

// paste puts text into the field sel as a paste does: one insertion, no
// key events.
func paste(t *testing.T, p *browsertest.Page, sel, text string) {
	t.Helper()
	must(t, p.Do(chromedp.Focus(chromedp.CSS(sel))))
	_, err := chromedp.Call(p.Ctx, input.InsertText, input.InsertTextParams{Text: text})
	must(t, err)
}

// value is the value of the field sel matches.
func value(t *testing.T, p *browsertest.Page, sel string) string {
	t.Helper()
	v, err := browsertest.Eval[string](p, `document.querySelector(`+browsertest.JS(sel)+`).value`)
	must(t, err)
	return v
}

// openCredentials goes to the Credentials page through the navigation.
func openCredentials(t *testing.T, p *browsertest.Page) {
	t.Helper()
	must(t, p.ClickText(`nav.nav`, "Credentials"))
	must(t, p.Wait(`location.pathname === '/credentials' && document.querySelector('main h1').innerText.startsWith('Credentials')
		&& document.querySelector('.tool')`, wait))
}

// The flow up to the session: generate an SSH key, assign it to
// a running workspace, unlock it; the list shows it ready and assigned,
// the workspace shows the assignment and that it needs a restart, and the
// restart clears that. Test and the public key work from the row.
func TestBrowserCredentialGenerateAssignUnlock(t *testing.T) {
	t.Parallel() // one of the longest (browser_test.go)
	is := is.New(t)
	e := newEnv(t)
	id, err := e.api.Register(e.ctx, e.repo(t, "alpha"), "Alpha", true)
	is.NoErr(err) // registered and started
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	must(t, p.Wait(`document.querySelector('.empty-title').innerText === 'No credentials yet'`, wait))

	const pass = "tidal-Crane-41-passphrase"
	must(t, p.ClickText(`.cred-add`, "Generate an SSH key"))
	must(t, p.Type(`dialog[open] input[name=name]`, "laptop"))
	must(t, p.Type(`dialog[open] input[name=passphrase]`, pass))
	must(t, p.Type(`dialog[open] input[name=passphrase2]`, pass))
	is.True(pageHolds(t, p, pass)) // the probe finds a passphrase while it is typed
	must(t, p.ClickText(`dialog[open]`, "Generate"))
	row := credRow(p, t, "laptop")
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	is.Equal(p.Text(row+` .badge`), "Locked")                                   // generated locked
	is.True(strings.HasPrefix(p.Text(row+` .cred-fp`), "SHA256:"))              // its fingerprint
	is.True(strings.Contains(p.Text(row+` .readiness`), "requires unlock"))     // the Hub's readiness message
	is.True(strings.Contains(p.Text(row+` .cred-caps`), "Log in to Git hosts")) // its capabilities
	noSecrets(t, p, pass)

	// Assign it to the running workspace for GitHub (typed unnormalized).
	must(t, p.ClickText(row, "Assign laptop"))
	must(t, p.Wait(`document.querySelector('dialog[open] select').value === `+browsertest.JS(id), wait))
	must(t, p.Type(`dialog[open] input[placeholder="github.com"]`, "GitHub.com."))
	must(t, p.ClickText(`dialog[open]`, "Assign"))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .assignments`)+`)?.innerText.includes('logs in to github.com')`, wait))
	is.True(strings.Contains(p.Text(row+` .assignments`), "Alpha")) // the workspace, by name

	// Unlock it with its passphrase.
	must(t, p.ClickText(row, "Unlock laptop"))
	must(t, p.Type(`dialog[open] input[type=password]`, "not the passphrase"))
	must(t, p.ClickText(`dialog[open]`, "Unlock"))
	must(t, p.Wait(`document.querySelector('dialog[open] [role=alert]')`, wait))
	is.Equal(value(t, p, `dialog[open] input[type=password]`), "") // a wrong passphrase is cleared too
	noSecrets(t, p, "not the passphrase")
	must(t, p.Do(chromedp.KeyEvent(kb.Escape)))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))

	// Again from the keyboard: the button, Enter, the passphrase (focused
	// in the dialog), Enter.
	unlock := row + ` button[aria-label="Unlock laptop"]`
	must(t, p.Wait(`document.activeElement === document.querySelector(`+browsertest.JS(unlock)+`)`, wait)) // focus came back
	must(t, p.Do(chromedp.KeyEvent("\r")))
	must(t, p.Wait(`document.activeElement === document.querySelector('dialog[open] input[type=password]')`, wait))
	must(t, p.Do(chromedp.KeyEvent(pass+"\r")))
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .badge`)+`).innerText.trim() === 'Ready'`, wait))
	is.True(strings.Contains(p.Text(row+` .readiness`), "unlocked in the Hub")) // the Hub says so
	must(t, p.ClickText(row, "Test laptop"))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .cred-test`)+`)?.innerText.includes('loaded in the Hub')`, wait))

	// The public key, as the API has it.
	var list struct {
		Credentials []struct {
			Metadata struct{ PublicKey string } `json:"metadata"`
		} `json:"credentials"`
	}
	is.NoErr(e.api.Do(e.ctx, "GET", "/api/hub/credentials", nil, &list)) // the Hub's view
	is.Equal(len(list.Credentials), 1)                                   // one credential
	must(t, p.ClickText(row, "Public key of laptop"))
	must(t, p.Wait(`document.querySelector('dialog[open] textarea')?.value === `+browsertest.JS(list.Credentials[0].Metadata.PublicKey), wait))
	must(t, p.ClickText(`dialog[open]`, "Close"))

	// The workspace shows it, and that it runs with what it had at start.
	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('.ws-creds')?.innerText.includes('laptop')`, wait))
	must(t, p.Wait(`document.querySelector('.ws-restart')?.innerText.includes('Restart required')`, wait))
	must(t, p.ClickText(`.ws-restart`, "Restart"))
	must(t, p.Wait(`!document.querySelector('.ws-restart') && document.querySelector('.ws-head .badge').innerText.trim() === 'Running'`, wait))
	noSecrets(t, p, pass)
}

// Importing through the page: an encrypted SSH key pasted with its
// passphrase, an OpenPGP key read from a file; a key the Hub cannot load
// shows its refusal, and the sixth attempt in a minute shows the wait.
func TestBrowserCredentialImport(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	is.NoErr(err) // a key
	const sshPass = "harbour-Lamp-93"
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "ann@laptop", []byte(sshPass))
	is.NoErr(err) // encrypted in OpenSSH's format
	sshKey := string(pem.EncodeToMemory(block))
	const pgpPass = "quiet-Orchard-58"
	pgpKey, err := helper.GenerateKey("Ann", "ann@example.com", []byte(pgpPass), "x25519", 0)
	is.NoErr(err) // an armored OpenPGP key
	keyFile := filepath.Join(t.TempDir(), "ann.asc")
	is.NoErr(os.WriteFile(keyFile, []byte(pgpKey), 0o600)) // on the disk of the browser's machine
	keyBody := strings.Split(strings.TrimSpace(sshKey), "\n")[2]
	pgpBody := strings.Split(strings.TrimSpace(pgpKey), "\n")[4]

	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)

	must(t, p.ClickText(`.cred-add`, "Import an SSH key"))
	must(t, p.Type(`dialog[open] input[name=name]`, "work key"))
	paste(t, p, `dialog[open] textarea`, sshKey)
	must(t, p.Type(`dialog[open] input[type=password]`, sshPass))
	is.True(pageHolds(t, p, keyBody)) // the probe finds a pasted key
	must(t, p.ClickText(`dialog[open]`, "Import"))
	row := credRow(p, t, "work key")
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	is.True(strings.HasPrefix(p.Text(row+` .cred-fp`), "SHA256:")) // its fingerprint

	must(t, p.ClickText(`.cred-add`, "Import an OpenPGP key"))
	must(t, p.Type(`dialog[open] input[name=name]`, "signing"))
	must(t, p.Do(chromedp.SetUploadFiles(chromedp.CSS(`dialog[open] input[type=file]`), []string{keyFile})))
	must(t, p.Wait(`document.querySelector('dialog[open] .key-source code')?.innerText === 'ann.asc'`, wait))
	must(t, p.ClickText(`dialog[open]`, "Import"))
	row = credRow(p, t, "signing")
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	is.Equal(p.Text(row+` .tag`), "OpenPGP key")                                        // its type
	is.True(strings.Contains(p.Text(row+` .readiness`), "signing key requires unlock")) // locked, as imported
	must(t, p.ClickText(row, "Unlock signing"))
	must(t, p.Type(`dialog[open] input[type=password]`, pgpPass))
	must(t, p.ClickText(`dialog[open]`, "Unlock"))
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(row+` .badge`)+`).innerText.trim() === 'Ready'`, wait))
	noSecrets(t, p, sshPass, keyBody, pgpPass, pgpBody)

	// Garbage: the Hub's refusal, in its words; then the limit of five
	// generate or import attempts a minute (two so far), with the wait.
	must(t, p.ClickText(`.cred-add`, "Import an SSH key"))
	must(t, p.Type(`dialog[open] input[name=name]`, "junk"))
	for i := 0; ; i++ {
		if i == 6 {
			t.Fatal("no 429 after 6 more imports")
		}
		paste(t, p, `dialog[open] textarea`, "not a key at all")
		must(t, p.ClickText(`dialog[open]`, "Import"))
		must(t, p.Wait(`document.querySelector('dialog[open] [role=alert]') && !document.querySelector('dialog[open] button[type=submit]').disabled`, wait))
		if strings.Contains(p.Text(`dialog[open] [role=alert]`), "Too many") {
			break
		}
		is.Equal(value(t, p, `dialog[open] textarea`), "") // the key is cleared after every answer
	}
	must(t, p.Wait(`/Wait \d+ s before trying again/.test(document.querySelector('dialog[open] [role=alert]').innerText)`, wait))
	must(t, p.Do(chromedp.KeyEvent("\x1b")))
	noSecrets(t, p, sshPass, keyBody, pgpPass, pgpBody)
}

// A token shows its host and user name, and never itself.
func TestBrowserCredentialTokenNeverShown(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	openCredentials(t, p)
	const token = "ghp_s3cretTokenValue0123456789abcdef"
	must(t, p.ClickText(`.cred-add`, "Add a token"))
	must(t, p.Type(`dialog[open] input[name=name]`, "GitHub token"))
	must(t, p.Type(`dialog[open] input[placeholder="github.com"]`, "GitHub.COM"))
	must(t, p.Type(`dialog[open] input[placeholder="oauth2"]`, "ann"))
	must(t, p.Type(`dialog[open] input[type=password]`, token))
	is.True(pageHolds(t, p, token)) // the probe finds the token while it is typed
	must(t, p.ClickText(`dialog[open]`, "Add token"))
	row := credRow(p, t, "GitHub token")
	must(t, p.Wait(`!document.querySelector('dialog[open]')`, wait))
	is.Equal(p.Text(row+` .cred-host code`), "github.com")                                // the normalized host
	is.Equal(p.Text(row+` .cred-user code`), "ann")                                       // the user name
	is.True(strings.Contains(p.Text(row+` .readiness`), "token credential is available")) // ready
	is.Equal(p.Text(row+` .badge`), "Ready")                                              // no unlock for a token
	noSecrets(t, p, token)
	must(t, p.Go(e.hub.URL+"credentials")) // and after a reload
	must(t, p.Wait(credRowJS("GitHub token"), wait))
	noSecrets(t, p, token)
}
