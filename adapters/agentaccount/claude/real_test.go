package claude_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/claude"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow/ptyflowtest"
	"github.com/wharfhub/wharf/hub"
)

// realClaude is the real `claude` WHARF_TEST_CLAUDE names (CI has none:
// Claude Code is a closed bundle), or the test is skipped.
func realClaude(t *testing.T) string {
	p := os.Getenv("WHARF_TEST_CLAUDE")
	if p == "" {
		t.Skip("WHARF_TEST_CLAUDE is not set: no real Claude Code to test against")
	}
	return p
}

// realSetup is a driver over the real CLI with an empty HOME of its own.
func realSetup(t *testing.T) (hub.AgentLoginDriver, string) {
	home := t.TempDir()
	d := claude.New(claude.Options{Command: []string{realClaude(t)},
		Env: []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}})
	t.Cleanup(func() {
		if pids := ptyflowtest.Left("HOME=" + home); len(pids) > 0 {
			t.Errorf("processes left running: %v", pids)
		}
	})
	return d, home
}

func TestTheRealClaudeCodeReportsItsLoggedOutState(t *testing.T) {
	is := is.New(t)
	d, _ := realSetup(t)
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	defer rt.Close()
	st, err := rt.Status(t.Context())
	is.NoErr(err)                            // its status is read
	is.True(st.Version != "")                // with its version
	is.Equal(st.Account.Source, "none")      // logged out
	is.Equal(st.Targets[0].Connected, false) // not connected
	is.True(st.Capabilities.Login)           // it can log in
	is.Equal(st.Capabilities.Logout, false)  // and has nothing to log out
}

// Starting a login reaches no server: the real CLI prints its manual
// link offline, which the driver reads from its terminal.
func TestTheRealClaudeCodesLoginLinkIsReadAndCancelled(t *testing.T) {
	is := is.New(t)
	d, _ := realSetup(t)
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	defer rt.Close()
	f, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "claude", Target: "anthropic", Method: "claudeai"})
	is.NoErr(err) // the login starts
	u := f.Challenge().URL
	is.True(strings.HasPrefix(u, "https://")) // with its link
	is.True(strings.Contains(u, "state="))    // carrying its state
	is.True(strings.Contains(u, "code=true")) // for the manual, code-showing page
	f.Cancel()
	within(t, f.Done(), 10*time.Second, "the login settles")
	is.True(f.Err() != nil) // cancelled
}

// A code typed into the real CLI's terminal reaches it: it tries the
// code (refused by Anthropic, or unreachable offline) and exits 1.
func TestTheRealClaudeCodeReadsTheCodeTypedIntoItsTerminal(t *testing.T) {
	is := is.New(t)
	d, _ := realSetup(t)
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	defer rt.Close()
	f, err := rt.Login(t.Context(), hub.AgentLoginStart{Agent: "claude", Target: "anthropic", Method: "console"})
	is.NoErr(err)                                          // the login starts
	is.NoErr(f.SubmitCode(t.Context(), "not-a-real-code")) // a code is typed
	within(t, f.Done(), 60*time.Second, "the login settles")
	is.Equal(hub.KindOf(f.Err()), hub.Invalid) // refused: the code was read and tried
}

// A Claude Code older than `claude auth` answers only its version and
// its general help: the driver never runs `auth status` there, which
// such a CLI would take for a prompt.
func TestAClaudeCodeWithoutAuthCommandsIsAskedForNothingElse(t *testing.T) {
	is := is.New(t)
	home := t.TempDir()
	script := filepath.Join(t.TempDir(), "claude")
	is.NoErr(os.WriteFile(script, []byte(`#!/bin/sh
echo "$*" >> "$HOME/calls"
case "$1" in
--version) echo "1.0.0 (Claude Code)" ;;
*) printf 'Usage: claude [options] [command] [prompt]\n\nCommands:\n  mcp  Configure MCP servers\n' ;;
esac
`), 0o755)) // an old CLI
	d := claude.New(claude.Options{Command: []string{script}, Env: []string{"HOME=" + home, "PATH=/usr/bin:/bin"}})
	rt, err := d.Start(t.Context())
	is.NoErr(err) // it starts
	defer rt.Close()
	_, err = rt.Status(t.Context())
	is.Equal(hub.KindOf(err), hub.Unavailable)              // its status cannot be read
	is.True(strings.Contains(hub.MessageOf(err), "update")) // and it should be updated
	_, err = rt.Login(t.Context(), hub.AgentLoginStart{Agent: "claude", Target: "anthropic", Method: "claudeai"})
	is.Equal(hub.KindOf(err), hub.Invalid) // a login is refused
	calls, err := os.ReadFile(filepath.Join(home, "calls"))
	is.NoErr(err)                                       // it was asked
	is.Equal(string(calls), "--version\nauth --help\n") // only its version and its help, once
}
