package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// The credentials' ids: what Logout names.
const (
	credSubscription = "claudeai"
	credConsole      = "console"
	credEnvKey       = "env:ANTHROPIC_API_KEY"
	credEnvToken     = "env-token"
	credKeyHelper    = "api-key-helper"
	credThirdParty   = "third-party"
)

// The methods' ids: what Login names.
const (
	methodSubscription = "claudeai"
	methodConsole      = "console"
	methodEnvKey       = "env-api-key"
	methodEnvToken     = "env-oauth-token"
)

// notRemovable says why each login Claude Code does not keep in its store
// cannot be logged out.
var notRemovable = map[string]string{
	credEnvKey:     "Claude Code reads ANTHROPIC_API_KEY from the Hub's environment: unset it where the Hub runs, then restart the Hub.",
	credEnvToken:   "Claude Code reads this token from the Hub's environment: unset it where the Hub runs, then restart the Hub.",
	credKeyHelper:  "Claude Code gets this key from the apiKeyHelper of its settings: remove it there.",
	credThirdParty: "Claude Code uses a third-party cloud by its environment (CLAUDE_CODE_USE_…): change it where the Hub runs.",
}

// authStatus is `claude auth status --json`'s answer. authMethod is
// claude.ai, api_key, oauth_token, api_key_helper, third_party or none;
// apiKeySource names the key it has (ANTHROPIC_API_KEY, apiKeyHelper,
// "/login managed key": a Console login), and a claude.ai login adds
// the account (null when unknown).
type authStatus struct {
	LoggedIn         *bool   `json:"loggedIn"`
	AuthMethod       *string `json:"authMethod"`
	APIProvider      string  `json:"apiProvider"`
	APIKeySource     string  `json:"apiKeySource"`
	Email            string  `json:"email"`
	OrgName          string  `json:"orgName"`
	SubscriptionType string  `json:"subscriptionType"`
}

// errStatus: the answer is not `claude auth status --json`'s.
var errStatus = errors.New("not the JSON of claude auth status")

// parseStatus reads `claude auth status --json`'s output: one JSON
// object with loggedIn and authMethod at least.
func parseStatus(out []byte) (authStatus, error) {
	var st authStatus
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&st); err != nil {
		return authStatus{}, errStatus
	}
	if st.LoggedIn == nil || st.AuthMethod == nil {
		return authStatus{}, errStatus
	}
	return st, nil
}

// authCommands are the `claude auth` commands the CLI has.
type authCommands struct{ Login, Logout, Status bool }

// parseAuthHelp reads `claude auth --help`: its usage line names `claude
// auth` (a CLI without it prints its general help), and its Commands
// section lists the commands, one a line.
func parseAuthHelp(out []byte) authCommands {
	var c authCommands
	lines := strings.Split(string(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "Usage: claude auth") {
		return c
	}
	section := false
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case !strings.HasPrefix(l, " "):
			section = strings.TrimSpace(l) == "Commands:"
		case section:
			switch f[0] {
			case "login":
				c.Login = true
			case "logout":
				c.Logout = true
			case "status":
				c.Status = true
			}
		}
	}
	return c
}

// versionOf is the version `claude --version` prints first
// ("2.1.197 (Claude Code)"): "" when it is not a version.
func versionOf(out []byte) string {
	f := strings.Fields(string(out))
	if len(f) == 0 || len(f[0]) > 64 {
		return ""
	}
	for _, r := range f[0] {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '-' || r == '+') {
			return ""
		}
	}
	return f[0]
}

// shown is s when it can be shown to people: at most 256 bytes of valid
// UTF-8 with no control character; "" otherwise.
func shown(s string) string {
	if len(s) > 256 || !utf8.ValidString(s) {
		return ""
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return ""
		}
	}
	return s
}

// providers name the third-party clouds Claude Code reaches Claude on.
var providers = map[string]struct{ name, variable string }{
	"bedrock":      {"Amazon Bedrock", "CLAUDE_CODE_USE_BEDROCK"},
	"vertex":       {"Google Vertex AI", "CLAUDE_CODE_USE_VERTEX"},
	"foundry":      {"Microsoft Foundry", "CLAUDE_CODE_USE_FOUNDRY"},
	"anthropicAws": {"Anthropic on AWS", "CLAUDE_CODE_USE_ANTHROPIC_AWS"},
	"mantle":       {"Mantle", "CLAUDE_CODE_USE_MANTLE"},
}

// statusOf maps Claude Code's answer to the port's status. The account's
// source is authMethod's: claude.ai is a subscription, or a Console
// login when its key is the "/login managed key"; the logins the answer
// names become the target's credentials, the one authMethod names
// active. env holds the runtime's environment, read for variable names
// only.
func statusOf(st authStatus, cmds authCommands, version string, env []string) hub.AgentLoginStatus {
	method := *st.AuthMethod
	plan := shown(st.SubscriptionType)
	acct := &hub.AgentVendorAccount{Source: "unknown"}
	var creds []hub.AgentCredential
	console := st.APIKeySource == "/login managed key"
	switch method {
	case "claude.ai":
		acct.Email, acct.Organization, acct.Plan = shown(st.Email), shown(st.OrgName), plan
		if console {
			acct.Source = "console"
			creds = append(creds, hub.AgentCredential{ID: credConsole, Label: "Anthropic Console key",
				Kind: hub.AgentCredentialKey, Active: true, Removable: true})
		} else {
			acct.Source = "subscription"
			label := "Claude subscription"
			if plan != "" {
				label = "Claude " + titled(plan) + " subscription"
			}
			creds = append(creds, hub.AgentCredential{ID: credSubscription, Label: label,
				Kind: hub.AgentCredentialOAuth, Active: true, Removable: true})
		}
	case "api_key":
		if st.APIKeySource == "ANTHROPIC_API_KEY" {
			acct.Source = "env-api-key"
		} else if st.APIKeySource == "apiKeyHelper" {
			acct.Source = "api-key-helper"
		}
	case "oauth_token":
		acct.Source = "env-token"
		creds = append(creds, hub.AgentCredential{ID: credEnvToken, Label: "Token from the environment",
			Kind: hub.AgentCredentialEnv, Active: true, Variables: setOf(env,
				"CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR")})
	case "api_key_helper":
		acct.Source = "api-key-helper"
	case "third_party":
		acct.Source = "third-party"
		p, known := providers[st.APIProvider]
		acct.Provider = shown(st.APIProvider)
		label := "Third-party cloud"
		var vars []string
		if known {
			label, vars = p.name, setOf(env, p.variable)
		}
		creds = append(creds, hub.AgentCredential{ID: credThirdParty, Label: label,
			Kind: hub.AgentCredentialOther, Active: true, Variables: vars})
	case "none":
		acct.Source = "none"
	}
	// The key sources beside (or behind) the login authMethod names.
	switch st.APIKeySource {
	case "ANTHROPIC_API_KEY":
		creds = append(creds, hub.AgentCredential{ID: credEnvKey, Label: "ANTHROPIC_API_KEY",
			Kind: hub.AgentCredentialEnv, Active: method == "api_key", Variables: []string{"ANTHROPIC_API_KEY"}})
	case "apiKeyHelper":
		creds = append(creds, hub.AgentCredential{ID: credKeyHelper, Label: "apiKeyHelper (Claude Code's settings)",
			Kind: hub.AgentCredentialConfig, Active: method == "api_key" || method == "api_key_helper"})
	}
	if method == "api_key_helper" && st.APIKeySource != "apiKeyHelper" {
		creds = append(creds, hub.AgentCredential{ID: credKeyHelper, Label: "apiKeyHelper (Claude Code's settings)",
			Kind: hub.AgentCredentialConfig, Active: true})
	}
	if creds == nil {
		creds = []hub.AgentCredential{}
	}
	methods := []hub.AgentLoginMethod{}
	if cmds.Login {
		methods = append(methods,
			hub.AgentLoginMethod{ID: methodSubscription, Kind: hub.AgentMethodOAuth,
				Label: "Claude subscription (Pro, Max, Team, Enterprise)", Fields: []hub.AgentLoginField{}, Completion: hub.CompletionCode},
			hub.AgentLoginMethod{ID: methodConsole, Kind: hub.AgentMethodOAuth,
				Label: "Anthropic Console (API usage billing)", Fields: []hub.AgentLoginField{}, Completion: hub.CompletionCode})
	}
	methods = append(methods,
		hub.AgentLoginMethod{ID: methodEnvKey, Kind: hub.AgentMethodEnv, Label: "Anthropic API key in the Hub's environment",
			Variables: []string{"ANTHROPIC_API_KEY"}},
		hub.AgentLoginMethod{ID: methodEnvToken, Kind: hub.AgentMethodEnv, Label: "Long-lived token (`claude setup-token`) in the Hub's environment",
			Variables: []string{"CLAUDE_CODE_OAUTH_TOKEN"}})
	return hub.AgentLoginStatus{
		Version: version,
		Capabilities: hub.AgentAccountCapabilities{
			Login:  cmds.Login,
			Logout: cmds.Logout && (acct.Source == "subscription" || acct.Source == "console"),
		},
		Account: acct,
		Targets: []hub.AgentLoginTarget{{ID: targetID, Name: targetName, Connected: *st.LoggedIn,
			Credentials: creds, Methods: methods}},
	}
}

// titled is s with its first letter upper-cased ("max" → "Max").
func titled(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// setOf is the names among names that env sets (to anything not empty).
func setOf(env []string, names ...string) []string {
	var set []string
	for _, n := range names {
		if driver.Getenv(env, n) != "" {
			set = append(set, n)
		}
	}
	return set
}
