package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/hub"
)

// opencodeEnv names the OpenCode binary (npm package opencode-ai) the
// real-agent test runs; .ci/run installs it and sets it. Without it the
// test is skipped, saying so.
const opencodeEnv = "WHARF_TEST_OPENCODE"

// TestRealOpenCode starts OpenCode's `opencode acp` offline with no
// credentials (a fresh HOME): it answers initialize and session/new, and
// goes away as a group on Close.
func TestRealOpenCode(t *testing.T) {
	bin := os.Getenv(opencodeEnv)
	if bin == "" {
		t.Skip("SKIPPED: no real agent: set " + opencodeEnv + " to an `opencode` binary (npm package opencode-ai; .ci/run installs it)")
	}
	is := is.New(t)
	home := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache")}
	rt := acp.New(acp.Options{Env: env, Commands: map[string][]string{"opencode": {bin, "acp"}}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	conn, err := rt.Start(ctx, "opencode", dir, func(string, hub.AgentUpdate) {})
	is.NoErr(err) // OpenCode starts and answers initialize
	defer conn.Close()
	is.Equal(conn.Info().Name, "OpenCode") // as the known agent
	is.True(conn.Info().LoadSession)       // that can reopen sessions
	st, err := conn.NewSession(ctx, dir)
	is.NoErr(err)               // a session opens offline, without credentials
	is.True(st.SessionID != "") // with an id
	is.NoErr(conn.Close())      // and the agent goes, with its group
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("OpenCode did not end")
	}
}
