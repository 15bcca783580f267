package local_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
)

// A session's agents find their stores where the Hub's agent logins put
// them: the child keeps every store locator the Hub had, and none of the
// Hub's API keys.
func TestASessionsAgentsFindTheStoresTheHubLocates(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	out := filepath.Join(t.TempDir(), "env")
	locators := map[string]string{
		"HOME": "/home/ann", "XDG_CONFIG_HOME": "/srv/ann/config", "XDG_DATA_HOME": "/srv/ann/data",
		"XDG_STATE_HOME": "/srv/ann/state", "XDG_CACHE_HOME": "/srv/ann/cache", "CODEX_HOME": "/srv/ann/codex",
		"CLAUDE_CONFIG_DIR": "/srv/ann/claude", "GEMINI_CLI_HOME": "/srv/ann/gemini",
	}
	keys := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "CODEX_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}
	base := []string{"PATH=" + os.Getenv("PATH"), "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"}
	for k, v := range locators {
		base = append(base, k+"="+v)
	}
	for _, k := range keys {
		base = append(base, k+"=secret-"+k)
	}
	b, _ := newBackend(t, modeReportEnv, local.Options{Env: base}, outEnv+"="+out)
	startSession(t, b, "alpha")
	data, err := os.ReadFile(out)
	is.NoErr(err) // the child reported its environment
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range locators {
		is.Equal(env[k], v) // the session's agents look where the Hub's logins land
	}
	for _, k := range append(keys, "DBUS_SESSION_BUS_ADDRESS") {
		_, ok := env[k]
		is.True(!ok) // no key, and not the desktop's keyring
	}
	is.True(!strings.Contains(string(data), "secret-")) // no key's value under another name
}
