package claude

import (
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// What `claude auth status --json` printed (Claude Code 2.1.197), for
// each kind of login.
const (
	realLoggedOut    = "{\n  \"loggedIn\": false,\n  \"authMethod\": \"none\",\n  \"apiProvider\": \"firstParty\"\n}\n"
	realEnvKey       = "{\n  \"loggedIn\": true,\n  \"authMethod\": \"api_key\",\n  \"apiProvider\": \"firstParty\",\n  \"apiKeySource\": \"ANTHROPIC_API_KEY\"\n}\n"
	realEnvToken     = "{\n  \"loggedIn\": true,\n  \"authMethod\": \"oauth_token\",\n  \"apiProvider\": \"firstParty\"\n}\n"
	realBedrock      = "{\n  \"loggedIn\": true,\n  \"authMethod\": \"third_party\",\n  \"apiProvider\": \"bedrock\"\n}\n"
	realSubscription = "{\n  \"loggedIn\": true,\n  \"authMethod\": \"claude.ai\",\n  \"apiProvider\": \"firstParty\",\n  \"email\": null,\n  \"orgId\": null,\n  \"orgName\": null,\n  \"subscriptionType\": \"max\"\n}\n"
	realConsole      = "{\n  \"loggedIn\": true,\n  \"authMethod\": \"claude.ai\",\n  \"apiProvider\": \"firstParty\",\n  \"apiKeySource\": \"/login managed key\",\n  \"email\": \"a@b.c\",\n  \"orgId\": \"u-1\",\n  \"orgName\": \"Org X\",\n  \"subscriptionType\": null\n}\n"
)

var allCommands = authCommands{Login: true, Logout: true, Status: true}

func TestTheStatusNamesTheLoginClaudeCodeReports(t *testing.T) {
	for _, c := range []struct {
		name, out string
		env       []string
		source    string
		connected bool
		logout    bool
		creds     string // id:active:removable, …
		account   hub.AgentVendorAccount
	}{
		{name: "logged out", out: realLoggedOut, source: "none", creds: ""},
		{name: "an environment key", out: realEnvKey, source: "env-api-key", connected: true,
			creds: "env:ANTHROPIC_API_KEY:true:false"},
		{name: "an environment token", out: realEnvToken, env: []string{"CLAUDE_CODE_OAUTH_TOKEN=t"}, source: "env-token", connected: true,
			creds: "env-token:true:false"},
		{name: "a third-party cloud", out: realBedrock, env: []string{"CLAUDE_CODE_USE_BEDROCK=1"}, source: "third-party", connected: true,
			creds: "third-party:true:false", account: hub.AgentVendorAccount{Provider: "bedrock"}},
		{name: "a subscription", out: realSubscription, source: "subscription", connected: true, logout: true,
			creds: "claudeai:true:true", account: hub.AgentVendorAccount{Plan: "max"}},
		{name: "a Console login", out: realConsole, source: "console", connected: true, logout: true,
			creds: "console:true:true", account: hub.AgentVendorAccount{Email: "a@b.c", Organization: "Org X"}},
		{name: "a subscription beside an environment key",
			out:    `{"loggedIn":true,"authMethod":"claude.ai","apiProvider":"firstParty","apiKeySource":"ANTHROPIC_API_KEY","email":"e@x.y","subscriptionType":"pro"}`,
			source: "subscription", connected: true, logout: true,
			creds: "claudeai:true:true,env:ANTHROPIC_API_KEY:false:false", account: hub.AgentVendorAccount{Email: "e@x.y", Plan: "pro"}},
		{name: "an apiKeyHelper", out: `{"loggedIn":true,"authMethod":"api_key_helper","apiProvider":"firstParty","apiKeySource":"apiKeyHelper"}`,
			source: "api-key-helper", connected: true, creds: "api-key-helper:true:false"},
		{name: "a login method it does not know", out: `{"loggedIn":true,"authMethod":"quantum","apiProvider":"firstParty"}`,
			source: "unknown", connected: true, creds: ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			st, err := parseStatus([]byte(c.out))
			is.NoErr(err) // it parses
			got := statusOf(st, allCommands, "2.1.197", c.env)
			is.Equal(got.Version, "2.1.197")                                                        // the version
			is.Equal(got.Account.Source, c.source)                                                  // the account's source
			is.Equal(got.Account.Email, c.account.Email)                                            // its email
			is.Equal(got.Account.Organization, c.account.Organization)                              // its organization
			is.Equal(got.Account.Plan, c.account.Plan)                                              // its plan
			is.Equal(got.Account.Provider, c.account.Provider)                                      // its provider
			is.Equal(got.Capabilities, hub.AgentAccountCapabilities{Login: true, Logout: c.logout}) // what it can do
			is.Equal(len(got.Targets), 1)                                                           // one target
			tg := got.Targets[0]
			is.Equal(tg.ID, "anthropic")        // Anthropic's
			is.Equal(tg.Connected, c.connected) // connected when logged in
			var creds []string
			for _, cr := range tg.Credentials {
				creds = append(creds, cr.ID+":"+boolString(cr.Active)+":"+boolString(cr.Removable))
			}
			is.Equal(strings.Join(creds, ","), c.creds) // its logins
			var methods []string
			for _, m := range tg.Methods {
				methods = append(methods, m.ID+":"+m.Kind+":"+string(m.Completion))
			}
			is.Equal(strings.Join(methods, ","), "claudeai:oauth:code,console:oauth:code,env-api-key:env:,env-oauth-token:env:") // its methods
		})
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestAStatusThatIsNotClaudeCodesIsRefused(t *testing.T) {
	for _, out := range []string{"", "Not logged in.", "[]", `{"loggedIn":true}`, `{"authMethod":"none"}`, `{"loggedIn":"yes","authMethod":"none"}`} {
		t.Run(out, func(t *testing.T) {
			is := is.New(t)
			_, err := parseStatus([]byte(out))
			is.True(err != nil) // refused
		})
	}
}

func TestWithoutAuthLoginTheStatusOffersOnlyTheEnvironment(t *testing.T) {
	is := is.New(t)
	st, err := parseStatus([]byte(realSubscription))
	is.NoErr(err) // it parses
	got := statusOf(st, authCommands{Status: true}, "", nil)
	is.Equal(got.Capabilities, hub.AgentAccountCapabilities{}) // neither login nor logout
	for _, m := range got.Targets[0].Methods {
		is.Equal(m.Kind, hub.AgentMethodEnv) // only the environment's methods
	}
}

func TestTheAuthHelpNamesItsCommands(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      authCommands
	}{
		{"Claude Code 2.1", "Usage: claude auth [options] [command]\n\nManage authentication\n\nOptions:\n  -h, --help        Display help for command\n\nCommands:\n  help [command]    display help for command\n  login [options]   Sign in to your Anthropic account\n  logout            Log out from your Anthropic account\n  status [options]  Show authentication status\n",
			allCommands},
		{"a CLI without auth", "Usage: claude [options] [command] [prompt]\n\nCommands:\n  mcp  Configure MCP servers\n  login  nothing\n", authCommands{}},
		{"options that look like commands", "Usage: claude auth [options]\n\nOptions:\n  login   not a command\n", authCommands{}},
		{"nothing", "", authCommands{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(parseAuthHelp([]byte(c.out)), c.want) // the commands
		})
	}
}

// FuzzParseStatus: whatever `claude auth status` prints, the status
// built from it holds one Anthropic target and shows no text with a
// control character or longer than 256 bytes.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{realLoggedOut, realEnvKey, realEnvToken, realBedrock, realSubscription, realConsole} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		st, err := parseStatus(out)
		if err != nil {
			return
		}
		got := statusOf(st, allCommands, versionOf(out), []string{"CLAUDE_CODE_OAUTH_TOKEN=x"})
		if len(got.Targets) != 1 || got.Targets[0].ID != targetID || got.Account == nil {
			t.Fatalf("status %+v", got)
		}
		a := got.Account
		for _, s := range []string{a.Source, a.Email, a.Organization, a.Plan, a.Provider, got.Version} {
			if len(s) > 256 || strings.IndexFunc(s, unicode.IsControl) >= 0 {
				t.Fatalf("unshowable text %q", s)
			}
		}
		if got.Capabilities.Logout != (a.Source == "subscription" || a.Source == "console") {
			t.Fatalf("logout %v for %s", got.Capabilities.Logout, a.Source)
		}
	})
}

// FuzzParseAuthHelp: reading any help never fails, and finds commands
// only under a `claude auth` usage.
func FuzzParseAuthHelp(f *testing.F) {
	f.Add([]byte("Usage: claude auth [options] [command]\n\nCommands:\n  login [options]  x\n  status  y\n"))
	f.Add([]byte("Usage: claude [options]\nCommands:\n  login\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		c := parseAuthHelp(out)
		if c != (authCommands{}) && !strings.HasPrefix(strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]), "Usage: claude auth") {
			t.Fatalf("commands %+v from %q", c, out)
		}
	})
}

func TestACodeLineIsOneLineWithThisLoginsState(t *testing.T) {
	for _, c := range []struct {
		name, code, line, field string
	}{
		{"a bare code", " abc-123 ", "abc-123#st", ""},
		{"code#state", "abc-123#st", "abc-123#st", ""},
		{"another login's state", "abc-123#other", "", "code"},
		{"no code before the state", "#st", "", "code"},
		{"empty", "  ", "", "code"},
		{"two lines", "abc\n123", "", "code"},
		{"a space inside", "abc 123", "", "code"},
		{"a control character", "abc\x03", "", "code"},
		{"non-ASCII", "abc\u00e9", "", "code"},
		{"too long", strings.Repeat("a", MaxCode+1), "", "code"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			line, err := codeLine(c.code, "st")
			is.Equal(line, c.line) // the line typed
			if c.field == "" {
				is.NoErr(err) // accepted
				return
			}
			var he *hub.Error
			is.True(errors.As(err, &he))                  // refused
			is.Equal(he.Kind, hub.Invalid)                // as invalid
			is.Equal(he.Details.Field, c.field)           // naming the code
			is.True(!strings.Contains(he.Message, "abc")) // never repeating it
		})
	}
}
