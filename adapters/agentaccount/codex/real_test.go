package codex_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/codex"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// realCodex starts the real `codex app-server` with an empty HOME (no
// login) or skips the test, saying so. WHARF_TEST_CODEX is the path of
// codex-acp (.ci/run installs @agentclientprotocol/codex-acp); the codex
// CLI is beside it.
func realCodex(t *testing.T) (hub.AgentLoginRuntime, string) {
	t.Helper()
	acp := os.Getenv("WHARF_TEST_CODEX")
	if acp == "" {
		t.Skip("SKIPPED: no real Codex: set WHARF_TEST_CODEX to the command of npm package @agentclientprotocol/codex-acp (.ci/run installs it)")
	}
	home := t.TempDir()
	d := codex.New(codex.Options{Command: []string{filepath.Join(filepath.Dir(acp), "codex")},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}})
	began := time.Now()
	rt, err := d.Start(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("codex app-server answered initialize in %v", time.Since(began))
	pid := codex.PID(rt)
	t.Cleanup(func() {
		began := time.Now()
		rt.Close()
		t.Logf("Close took %v", time.Since(began))
		if !groupGone(pid) {
			t.Error("codex's process group outlived Close")
		}
	})
	return rt, filepath.Join(home, ".codex")
}

// TestTheRealCodexReadsThatNothingIsLoggedIn starts the real app-server
// offline with an empty HOME and reads its login: none.
func TestTheRealCodexReadsThatNothingIsLoggedIn(t *testing.T) {
	is := is.New(t)
	rt, _ := realCodex(t)
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                 // codex answered account/read
	is.True(st.Version != "")                                     // and said its version
	is.Equal(st.Account, &hub.AgentVendorAccount{Source: "none"}) // no login
	is.True(!st.Targets[0].Connected)                             // not connected
	is.Equal(len(st.Targets[0].Credentials), 0)                   // nothing saved
}

// TestTheRealCodexSavesAndRemovesAKey logs the real app-server in with a
// made-up key (codex does not check it with OpenAI) and out again.
func TestTheRealCodexSavesAndRemovesAKey(t *testing.T) {
	is := is.New(t)
	rt, store := realCodex(t)
	is.NoErr(rt.LoginWithKey(ctxFor(t), keyLogin(testKey))) // saved
	data, err := os.ReadFile(filepath.Join(store, "auth.json"))
	is.NoErr(err)                                    // in codex's store
	is.True(strings.Contains(string(data), testKey)) // the key codex was given
	st, err := rt.Status(ctxFor(t))
	is.NoErr(err)                                                                                  // read
	is.Equal(st.Account, &hub.AgentVendorAccount{Source: "api-key", Provider: "openai"})           // as a key login
	is.NoErr(rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: "openai", Credential: "apikey"})) // logged out
	_, err = os.Stat(filepath.Join(store, "auth.json"))
	is.True(os.IsNotExist(err)) // the store is empty again
}

// TestTheRealCodexStartsABrowserLoginFinishedByRedirect starts a ChatGPT
// browser login (codex builds the URL and starts its listener; nothing
// goes to OpenAI) and cancels it.
func TestTheRealCodexStartsABrowserLoginFinishedByRedirect(t *testing.T) {
	is := is.New(t)
	rt, _ := realCodex(t)
	flow, err := rt.Login(ctxFor(t), chatgptLogin("chatgpt"))
	is.NoErr(err) // started
	ch := flow.Challenge()
	is.True(strings.HasPrefix(ch.URL, "https://auth.openai.com/oauth/authorize?")) // OpenAI's page
	is.Equal(ch.Completion, hub.CompletionRedirect)                                // finished by the redirect
	cb, err := url.Parse(ch.Callback)
	is.NoErr(err)                                                            // the callback is an address
	is.Equal(cb.Scheme+"://"+cb.Hostname(), "http://127.0.0.1")              // on loopback (port 1455, or the next free one)
	is.Equal(cb.Path, "/auth/callback")                                      // codex's listener
	is.NoErr(driver.Deliver(ctxFor(t), ch.Callback+"?state=not-the-logins")) // which listens (and refuses a wrong state)
	flow.Cancel()
	settled(t, flow.Done(), "the login")
	codex.WaitBackground(rt)
	is.Equal(hub.MessageOf(flow.Err()), "The login was cancelled.") // cancelled
	// Codex closes its listener on its own time after the cancel: the
	// test asks again, boundedly, until nothing answers.
	gone := false
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range 100 {
		if gone = driver.Deliver(ctxFor(t), ch.Callback) != nil; gone {
			break
		}
		<-tick.C
	}
	is.True(gone) // and codex's listener is gone
}
