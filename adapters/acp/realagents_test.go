package acp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/hub/chat"
)

// The real agents' commands (npm packages) the real-agent tests run;
// .ci/run installs them and sets these. Without one, its test is
// skipped, saying so.
const (
	opencodeEnv = "WHARF_TEST_OPENCODE" // opencode-ai: `opencode`
	geminiEnv   = "WHARF_TEST_GEMINI"   // @google/gemini-cli: `gemini`
	codexEnv    = "WHARF_TEST_CODEX"    // @agentclientprotocol/codex-acp: `codex-acp`
)

// realAgent returns the command named by variable, or skips the test.
func realAgent(t *testing.T, variable, pkg string) string {
	t.Helper()
	bin := os.Getenv(variable)
	if bin == "" {
		t.Skip("SKIPPED: no real agent: set " + variable + " to the command of npm package " + pkg + " (.ci/run installs it)")
	}
	return bin
}

// offlineEnv is a fresh HOME with nothing logged in, and the test's PATH
// (node).
func offlineEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
}

// closeAgent closes conn and waits for it to be gone, with its group.
func closeAgent(ctx context.Context, t *testing.T, conn chat.AgentConnection) {
	t.Helper()
	is := is.New(t)
	is.NoErr(conn.Close()) // the agent goes
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the agent did not end")
	}
}

// TestRealOpenCode starts OpenCode's `opencode acp` offline with no
// credentials (a fresh HOME): it answers initialize and session/new, and
// goes away as a group on Close.
func TestRealOpenCode(t *testing.T) {
	bin := realAgent(t, opencodeEnv, "opencode-ai")
	is := is.New(t)
	rt := acp.New(acp.Options{Env: offlineEnv(t), Commands: map[string][]string{"opencode": {bin, "acp"}}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	conn, err := rt.Start(ctx, "opencode", dir, func(string, chat.AgentUpdate) {})
	is.NoErr(err) // OpenCode starts and answers initialize
	defer conn.Close()
	is.Equal(conn.Info().Name, "OpenCode") // as the known agent
	is.True(conn.Info().LoadSession)       // that can reopen sessions
	st, err := conn.NewSession(ctx, dir)
	is.NoErr(err)               // a session opens offline, without credentials
	is.True(st.SessionID != "") // with an id
	closeAgent(ctx, t, conn)
}

// TestRealKeyAgents starts Gemini CLI and Codex offline: with nothing
// logged in a session is refused as a login the agent needs (their
// -32000), and once the Hub gives the agent an API key (a fake one: the
// agents check it only when they call their model) the runtime
// authenticates with it, a session opens, and its models are listed and
// set (Gemini's through the older `models` object and session/set_model).
func TestRealKeyAgents(t *testing.T) {
	for _, tc := range []struct {
		id, variable, pkg string
		args              []string
		key               string // the environment entry of the key
	}{
		{"gemini", geminiEnv, "@google/gemini-cli", []string{"--acp"}, "GEMINI_API_KEY=fake-gemini-key-for-a-test"},
		{"codex", codexEnv, "@agentclientprotocol/codex-acp", nil, "OPENAI_API_KEY=sk-fake-codex-key-for-a-test"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			bin := realAgent(t, tc.variable, tc.pkg)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			command := map[string][]string{tc.id: append([]string{bin}, tc.args...)}

			t.Run("no key", func(t *testing.T) {
				is := is.New(t)
				rt := acp.New(acp.Options{Env: offlineEnv(t), Commands: command})
				dir := t.TempDir()
				conn, err := rt.Start(ctx, tc.id, dir, func(string, chat.AgentUpdate) {})
				is.NoErr(err) // the agent starts without a login
				defer conn.Close()
				_, err = conn.NewSession(ctx, dir)
				is.True(errors.Is(err, chat.ErrAgentLoginRequired)) // and asks for one, never a crash
				closeAgent(ctx, t, conn)
			})
			t.Run("key", func(t *testing.T) {
				is := is.New(t)
				rt := acp.New(acp.Options{Env: offlineEnv(t), Commands: command,
					AgentEnv: map[string][]string{tc.id: {tc.key}}})
				dir := t.TempDir()
				conn, err := rt.Start(ctx, tc.id, dir, func(string, chat.AgentUpdate) {})
				is.NoErr(err) // the agent takes the key
				defer conn.Close()
				st, err := conn.NewSession(ctx, dir)
				is.NoErr(err)               // and opens a session
				is.True(st.SessionID != "") // with an id
				is.True(len(st.Models) > 1) // offering its models
				other := st.Models[0].ID
				if other == st.Model {
					other = st.Models[1].ID
				}
				is.NoErr(conn.SetModel(ctx, st.SessionID, other)) // one of which is chosen
				closeAgent(ctx, t, conn)
			})
		})
	}
}
