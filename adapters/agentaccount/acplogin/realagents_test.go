package acplogin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/acplogin"
	"github.com/wharfhub/wharf/hub"
)

// TestRealAgentsAddedAsCustomAgents runs the real agents' ACP commands
// as custom agents would be (`--agent ID=COMMAND`), offline, with a fresh
// HOME: each answers initialize with the login methods it declares, and
// its whole group goes on Close. A variable that is unset skips its
// agent, saying so (.ci/run sets them).
func TestRealAgentsAddedAsCustomAgents(t *testing.T) {
	for _, tc := range []struct {
		variable, pkg, id, name string
		args                    []string
		methods                 map[string]string // id → kind, of those it must declare
		logout                  bool
	}{
		{"WHARF_TEST_OPENCODE", "opencode-ai", "opencode", "OpenCode", []string{"acp"},
			map[string]string{"opencode-login": hub.AgentMethodCommand}, false},
		{"WHARF_TEST_GEMINI", "@google/gemini-cli", "gemini", "Gemini CLI", []string{"--acp"},
			map[string]string{"gemini-api-key": hub.AgentMethodCommand}, false},
		{"WHARF_TEST_CODEX", "@agentclientprotocol/codex-acp", "codex", "Codex", nil,
			map[string]string{"chat-gpt": hub.AgentMethodCommand}, true},
	} {
		t.Run(tc.id, func(t *testing.T) {
			bin := os.Getenv(tc.variable)
			if bin == "" {
				t.Skip("SKIPPED: no real agent: set " + tc.variable + " to the command of npm package " + tc.pkg + " (.ci/run installs it)")
			}
			is := is.New(t)
			home := t.TempDir()
			env := []string{"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
				"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
				"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
				"CODEX_HOME=" + filepath.Join(home, ".codex")}
			is.NoErr(os.MkdirAll(filepath.Join(home, ".codex"), 0o700)) // Codex wants its CODEX_HOME to exist
			d := acplogin.New(acplogin.Options{ID: tc.id, Name: tc.name, Command: append([]string{bin}, tc.args...), Env: env})
			rt, err := d.Start(ctxFor(t))
			is.NoErr(err) // the agent answers initialize
			defer rt.Close()
			pid := acplogin.Pid(rt)
			st, err := rt.Status(ctxFor(t))
			is.NoErr(err)
			t.Logf("%s %s declares: logout %v, login command %q", tc.name, st.Version, st.Capabilities.Logout, d.Agent().LoginCommand)
			kinds := map[string]string{}
			for _, m := range st.Targets[0].Methods {
				t.Logf("  %s %q %q %q %q", m.Kind, m.ID, m.Label, m.Command, m.Variables)
				kinds[m.ID] = m.Kind
			}
			for id, kind := range tc.methods {
				is.Equal(kinds[id], kind) // the method it is known to declare
			}
			is.Equal(st.Capabilities.Logout, tc.logout) // and logout as it declares it
			is.Equal(len(st.Targets[0].Credentials), 0) // nothing in a fresh environment
			if tc.logout {
				err := rt.Logout(ctxFor(t), hub.AgentCredentialRef{Target: tc.id, Credential: tc.id})
				t.Logf("logout with nothing logged in: %v", err)
				is.NoErr(err) // the agent's own logout answers
			}
			rt.Close()
			waitDone(t, rt.Done())
			is.True(groupGone(t, pid)) // the agent and its children are gone
		})
	}
}
