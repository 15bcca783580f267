package opencode_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/opencode"
	"github.com/wharfhub/wharf/hub"
)

// TestTheRealOpenCodeServerReportsNoLoginAndTakesAKey runs the real
// `opencode serve` (WHARF_TEST_OPENCODE: the `opencode` command of npm
// package opencode-ai, which .ci/run installs) offline in an empty home:
// the status reads the providers' login methods and no login; a key login
// lands in its store and the logout removes it; Close leaves no process.
func TestTheRealOpenCodeServerReportsNoLoginAndTakesAKey(t *testing.T) {
	bin := os.Getenv("WHARF_TEST_OPENCODE")
	if bin == "" {
		t.Skip("SKIPPED: no real OpenCode: set WHARF_TEST_OPENCODE to the command of npm package opencode-ai (.ci/run installs it)")
	}
	is := is.New(t)
	h := newHome(t)
	d := opencode.New(opencode.Options{Command: []string{bin}, Env: h.env})
	c, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	rt, err := d.Start(c)
	is.NoErr(err) // the real server starts, offline
	defer rt.Close()
	t.Logf("start: %v", time.Since(began))
	began = time.Now()
	st, err := rt.Status(c)
	is.NoErr(err) // and reports its status
	t.Logf("first status: %v (%d targets)", time.Since(began), len(st.Targets))
	is.True(st.Version != "")                                                                           // with its version
	is.Equal(st.Capabilities, hub.AgentAccountCapabilities{Login: true, Logout: true, Activate: false}) // of OpenCode 1.x
	for _, tg := range st.Targets {
		for _, cr := range tg.Credentials {
			is.Equal(cr.Kind, hub.AgentCredentialOther) // no login but what OpenCode connects itself
		}
	}
	openai, ok := target(st, "openai")
	is.True(ok) // OpenAI is listed
	is.Equal(openai.Methods[0], hub.AgentLoginMethod{ID: "0", Kind: hub.AgentMethodOAuth, Label: "ChatGPT Pro/Plus (browser)", Fields: []hub.AgentLoginField{}})
	copilot, ok := target(st, "github-copilot")
	is.True(ok)                                                           // and GitHub Copilot
	is.Equal(copilot.Methods[0].Fields[1].When[0].Key, "deploymentType")  // with a question asked on a condition
	is.Equal(copilot.Methods[0].Fields[0].Options[1].Value, "enterprise") // of a choice

	began = time.Now()
	_, err = rt.Status(c)
	is.NoErr(err)
	t.Logf("next status: %v", time.Since(began))

	is.NoErr(rt.LoginWithKey(c, hub.AgentKeyLogin{Agent: "opencode", Target: "anthropic", Method: "0", Key: "sk-ant-not-a-real-key"})) // a key login
	is.Equal(h.store(t)["anthropic"], map[string]any{"type": "api", "key": "sk-ant-not-a-real-key"})                                   // lands in OpenCode's store
	st, err = rt.Status(c)
	is.NoErr(err)
	anthropic, _ := target(st, "anthropic")
	is.Equal(anthropic.Credentials, []hub.AgentCredential{{ID: "anthropic", Kind: hub.AgentCredentialKey, Label: "API key", Active: true, Removable: true}})
	is.NoErr(rt.Logout(c, hub.AgentCredentialRef{Agent: "opencode", Target: "anthropic", Credential: "anthropic"})) // the logout
	is.True(h.store(t)["anthropic"] == nil)                                                                         // removes it
	st, err = rt.Status(c)
	is.NoErr(err)
	anthropic, _ = target(st, "anthropic")
	is.True(!anthropic.Connected) // and the server no longer counts it

	before := processesOf(h)
	is.True(len(before) > 0) // the server ran under the home
	began = time.Now()
	rt.Close()
	t.Logf("close: %v", time.Since(began))
	waitGone(t, before)
	is.Equal(len(processesOf(h)), 0) // and nothing of it is left
}
