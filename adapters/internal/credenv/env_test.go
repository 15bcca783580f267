package credenv_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
)

// An agent finds its store by HOME and its locators, and by nothing that
// is a secret: every API key, token, socket and Wharf setting stays with
// the Hub.
func TestAgentsKeepTheirStoreLocatorsAndNoSecret(t *testing.T) {
	for _, tc := range []struct {
		name string
		pass bool
	}{
		// The basics.
		{"PATH", true}, {"HOME", true}, {"USER", true}, {"LOGNAME", true}, {"SHELL", true},
		{"LANG", true}, {"LC_ALL", true}, {"LC_CTYPE", true}, {"TZ", true}, {"TERM", true}, {"TMPDIR", true},
		// Where each agent keeps its login.
		{"XDG_CONFIG_HOME", true}, {"XDG_DATA_HOME", true}, {"XDG_STATE_HOME", true}, {"XDG_CACHE_HOME", true},
		{"CODEX_HOME", true}, {"CLAUDE_CONFIG_DIR", true}, {"GEMINI_CLI_HOME", true},
		{"GEMINI_FORCE_FILE_STORAGE", true}, {"GEMINI_FORCE_ENCRYPTED_FILE_STORAGE", true},
		// API keys and tokens.
		{"ANTHROPIC_API_KEY", false}, {"ANTHROPIC_AUTH_TOKEN", false}, {"CLAUDE_CODE_OAUTH_TOKEN", false},
		{"OPENAI_API_KEY", false}, {"CODEX_API_KEY", false}, {"GEMINI_API_KEY", false}, {"GOOGLE_API_KEY", false},
		{"GOOGLE_APPLICATION_CREDENTIALS", false}, {"OPENCODE_AUTH_CONTENT", false}, {"OPENROUTER_API_KEY", false},
		{"GH_TOKEN", false}, {"GITHUB_TOKEN", false}, {"GITLAB_TOKEN", false}, {"AWS_SECRET_ACCESS_KEY", false},
		{"NETRC", false},
		// Sockets, the keyring, and settings that redirect tools.
		{"SSH_AUTH_SOCK", false}, {"GPG_AGENT_INFO", false}, {"DBUS_SESSION_BUS_ADDRESS", false},
		{"XDG_RUNTIME_DIR", false}, {"XDG_CONFIG_DIRS", false}, {"GIT_DIR", false}, {"GIT_CONFIG_GLOBAL", false},
		{"GNUPGHOME", false}, {"GH_CONFIG_DIR", false}, {"HTTPS_PROXY", false}, {"OPENCODE_CONFIG_DIR", false},
		// Wharf's own.
		{"WHARF_STATE_DIR", false}, {"WHARF_SESSION_CREDENTIALS", false}, {"WHARF_PASSWORD", false},
		// Near misses.
		{"XDG_CONFIG_HOME_X", false}, {"HOMEX", false}, {"codex_home", false}, {"LC", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got := credenv.AgentEnv([]string{tc.name + "=/some/value"})
			is.Equal(slices.Equal(got, []string{tc.name + "=/some/value"}), tc.pass) // passes exactly when allowed
		})
	}
}

func TestAgentEnvKeepsTheOrderAndTheLastValue(t *testing.T) {
	is := is.New(t)
	got := credenv.AgentEnv([]string{
		"HOME=/home/ann", "OPENAI_API_KEY=sk-secret", "CODEX_HOME=/srv/codex", "broken",
		"XDG_DATA_HOME=/srv/data", "HOME=/home/bob", "=empty-name",
	})
	is.Equal(got, []string{"HOME=/home/bob", "CODEX_HOME=/srv/codex", "XDG_DATA_HOME=/srv/data"}) // first place, last value
	is.True(!strings.Contains(strings.Join(got, "\n"), "sk-secret"))                              // the key stays out
}
