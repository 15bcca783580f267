package codex_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/wharfhub/wharf/adapters/agentaccount/codex"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// TestTheConformanceSuite runs the agent-login contract on the Codex
// driver over the fake codex: browser logins finished at codex's
// loopback listener.
func TestTheConformanceSuite(t *testing.T) {
	porttest.AgentLoginDriver(t, func(t *testing.T) porttest.AgentLoginScene {
		return codexScene{newFake(t, "CODEXSERVER_CODE=code-suite")}
	})
}

// codexScene plays the person for a fake codex.
type codexScene struct{ f *fake }

func (s codexScene) Driver() hub.AgentLoginDriver { return s.f.driver() }

func (s codexScene) Missing() hub.AgentLoginDriver {
	return codex.New(codex.Options{Env: []string{"PATH=" + s.f.t.TempDir(), "HOME=" + s.f.home}})
}

func (s codexScene) Target() string             { return "openai" }
func (s codexScene) KeyLogin() (string, string) { return "api-key", "sk-suite-key" }
func (s codexScene) BrowserLogin() string       { return "chatgpt" }

// Finish is the address the browser lands on after signing in: codex's
// callback with the code and the authorize URL's state.
func (s codexScene) Finish(t *testing.T, ch hub.AgentLoginChallenge) string {
	u, err := url.Parse(ch.URL)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := url.Parse(ch.Callback)
	if err != nil || !strings.HasPrefix(ch.Callback, "http://") {
		t.Fatalf("callback %q", ch.Callback)
	}
	q := url.Values{"code": {"code-suite"}, "state": {u.Query().Get("state")}}
	return "http://localhost:" + cb.Port() + cb.Path + "?" + q.Encode()
}
