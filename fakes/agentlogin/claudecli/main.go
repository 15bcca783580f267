// Command claudecli is a fake `claude` (Claude Code's CLI, 2.1.x) for
// the tests of the Claude Code login driver: the parts of its interface
// the driver uses, as the real one answers, offline and deterministic.
//
//   - `claude --version`: "2.1.197 (Claude Code)".
//   - `claude auth --help`: the auth commands (login, logout, status).
//   - `claude auth status [--json]`: the real JSON ({loggedIn,
//     authMethod, apiProvider, apiKeySource?, email, orgId, orgName,
//     subscriptionType} for a claude.ai login), computed as the real one
//     does from the environment (CLAUDE_CODE_USE_BEDROCK/VERTEX/FOUNDRY,
//     ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_API_KEY)
//     and the store; exit status 1 when logged out.
//   - `claude auth login [--claudeai|--console]`: prints the manual link
//     (with a fresh state) as the real one does, then reads lines from
//     its terminal: a line without `code#state` is "Invalid code" and
//     read again; the right code with this login's state saves the login
//     and prints "Login successful." (exit 0); anything else is "Login
//     failed" (exit 1).
//   - `claude auth logout`: removes the login.
//
// The store is the real one: $CLAUDE_CONFIG_DIR/.credentials.json
// (default ~/.claude/.credentials.json) holds a subscription login
// (claudeAiOauth), and the global config ($CLAUDE_CONFIG_DIR/.claude.json,
// default ~/.claude.json) the Console key (primaryApiKey) and the
// account (oauthAccount). Tests steer it with WHARF_FAKE_CLAUDE_CODE
// (the code the fake authorization server accepts; default
// "fake-authorization-code") and WHARF_FAKE_CLAUDE_NO_LINK=1 (a login
// that never prints its link). FORCE_HYPERLINK=1 prints the link as a
// terminal hyperlink, as the real one does in a terminal that supports
// them.
package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

const version = "2.1.197 (Claude Code)"

const authHelp = `Usage: claude auth [options] [command]

Manage authentication

Options:
  -h, --help        Display help for command

Commands:
  help [command]    display help for command
  login [options]   Sign in to your Anthropic account
  logout            Log out from your Anthropic account
  status [options]  Show authentication status
`

func main() {
	args := os.Args[1:]
	switch {
	case len(args) == 1 && (args[0] == "--version" || args[0] == "-v"):
		fmt.Println(version)
	case len(args) >= 1 && args[0] == "auth":
		os.Exit(auth(args[1:]))
	default:
		// The real one would start a session with a prompt: a driver
		// must never get here.
		fmt.Fprintln(os.Stderr, "fake claude: unsupported arguments")
		os.Exit(2)
	}
}

func auth(args []string) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Print(authHelp)
		return 0
	}
	switch args[0] {
	case "status":
		return status(args[1:])
	case "login":
		return login(args[1:])
	case "logout":
		return logout()
	}
	fmt.Fprintf(os.Stderr, "error: unknown command '%s'\n", args[0])
	return 1
}

// configDir is Claude Code's folder; globalConfig its global config.
func configDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.Getenv("HOME"), ".claude")
}

func globalConfig() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	return filepath.Join(os.Getenv("HOME"), ".claude.json")
}

func credentialsFile() string { return filepath.Join(configDir(), ".credentials.json") }

// readJSON reads a JSON object file; a missing one is empty.
func readJSON(path string) map[string]any {
	m := map[string]any{}
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

func writeJSON(path string, m map[string]any, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	return os.WriteFile(path, b, mode)
}

func truthy(name string) bool {
	v := strings.ToLower(os.Getenv(name))
	return v == "1" || v == "true" || v == "yes" || v == "on"
}

func status(args []string) int {
	provider := "firstParty"
	switch {
	case truthy("CLAUDE_CODE_USE_BEDROCK"):
		provider = "bedrock"
	case truthy("CLAUDE_CODE_USE_FOUNDRY"):
		provider = "foundry"
	case truthy("CLAUDE_CODE_USE_VERTEX"):
		provider = "vertex"
	}
	creds := readJSON(credentialsFile())
	global := readJSON(globalConfig())
	oauth, _ := creds["claudeAiOauth"].(map[string]any)
	tokenSource := "none"
	switch {
	case os.Getenv("ANTHROPIC_AUTH_TOKEN") != "":
		tokenSource = "ANTHROPIC_AUTH_TOKEN"
	case os.Getenv("CLAUDE_CODE_OAUTH_TOKEN") != "":
		tokenSource = "CLAUDE_CODE_OAUTH_TOKEN"
	case oauth != nil && oauth["accessToken"] != nil && hasScope(oauth, "user:inference"):
		tokenSource = "claude.ai"
	}
	keySource := "none"
	switch {
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		keySource = "ANTHROPIC_API_KEY"
	case global["primaryApiKey"] != nil:
		keySource = "/login managed key"
	}
	envKey := os.Getenv("ANTHROPIC_API_KEY") != ""
	third := provider != "firstParty"
	loggedIn := tokenSource != "none" || keySource != "none" || envKey || third
	method := "none"
	switch {
	case third:
		method = "third_party"
	case tokenSource == "claude.ai":
		method = "claude.ai"
	case tokenSource != "none":
		method = "oauth_token"
	case keySource == "ANTHROPIC_API_KEY" || envKey:
		method = "api_key"
	case keySource == "/login managed key":
		method = "claude.ai"
	}
	if slices.Contains(args, "--text") {
		if !loggedIn {
			fmt.Println("Not logged in. Run claude auth login to authenticate.")
		} else {
			fmt.Println("Login method: " + method)
		}
	} else {
		// The real one's key order.
		type answer struct {
			LoggedIn         bool            `json:"loggedIn"`
			AuthMethod       string          `json:"authMethod"`
			APIProvider      string          `json:"apiProvider"`
			APIKeySource     string          `json:"apiKeySource,omitempty"`
			Email            json.RawMessage `json:"email,omitempty"`
			OrgID            json.RawMessage `json:"orgId,omitempty"`
			OrgName          json.RawMessage `json:"orgName,omitempty"`
			SubscriptionType json.RawMessage `json:"subscriptionType,omitempty"`
		}
		a := answer{LoggedIn: loggedIn, AuthMethod: method, APIProvider: provider}
		if keySource != "none" {
			a.APIKeySource = keySource
		} else if envKey {
			a.APIKeySource = "ANTHROPIC_API_KEY"
		}
		if method == "claude.ai" {
			// null when unknown, as the real one prints them.
			account, _ := global["oauthAccount"].(map[string]any)
			a.Email, a.OrgID, a.OrgName = str(account, "emailAddress"), str(account, "organizationUuid"), str(account, "organizationName")
			a.SubscriptionType = str(oauth, "subscriptionType")
		}
		b, _ := json.MarshalIndent(a, "", "  ")
		fmt.Println(string(b))
	}
	if loggedIn {
		return 0
	}
	return 1
}

// str is m[key] in JSON: null unless a string.
func str(m map[string]any, key string) json.RawMessage {
	if s, ok := m[key].(string); ok {
		b, _ := json.Marshal(s)
		return b
	}
	return json.RawMessage("null")
}

func hasScope(oauth map[string]any, scope string) bool {
	list, _ := oauth["scopes"].([]any)
	for _, s := range list {
		if s == scope {
			return true
		}
	}
	return false
}

// login is `claude auth login`: the manual link, then codes from the
// terminal.
func login(args []string) int {
	console := slices.Contains(args, "--console")
	if console && slices.Contains(args, "--claudeai") {
		fmt.Fprintln(os.Stderr, "Error: --console and --claudeai cannot be used together.")
		return 1
	}
	state := random(32)
	host, path := "https://claude.com", "/cai/oauth/authorize"
	if console {
		host, path = "https://platform.claude.com", "/oauth/authorize"
	}
	q := url.Values{}
	q.Set("code", "true")
	q.Set("client_id", "9d1c250a-e61b-44d9-88ed-5944d1962f5e")
	q.Set("response_type", "code")
	q.Set("redirect_uri", "https://platform.claude.com/oauth/code/callback")
	q.Set("scope", "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload")
	q.Set("code_challenge", random(32))
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	link := host + path + "?" + q.Encode()
	if os.Getenv("WHARF_FAKE_CLAUDE_NO_LINK") == "1" {
		wait() // a login that never gets to its link
	}
	shown := link
	if os.Getenv("FORCE_HYPERLINK") == "1" {
		shown = "\x1b]8;;" + link + "\x07\x1b[94m" + link + "\x1b[39m\x1b]8;;\x07"
	}
	fmt.Print("Opening browser to sign in\u2026\n")
	fmt.Printf("If the browser didn't open, visit: %s\n", shown)
	fmt.Print("Paste code here if prompted > ")
	want := os.Getenv("WHARF_FAKE_CLAUDE_CODE")
	if want == "" {
		want = "fake-authorization-code"
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 4096), 64<<10)
	for in.Scan() {
		code, got, _ := strings.Cut(strings.TrimSpace(in.Text()), "#")
		got, _, _ = strings.Cut(got, "#")
		if code == "" || got == "" {
			fmt.Fprintln(os.Stderr, "Invalid code. Please make sure the full code was copied.")
			continue
		}
		if code != want || got != state {
			fmt.Fprintln(os.Stderr, "Login failed: Request failed with status code 400")
			return 1
		}
		if err := save(console); err != nil {
			fmt.Fprintln(os.Stderr, "Login failed: "+err.Error())
			return 1
		}
		fmt.Println("Login successful.")
		return 0
	}
	wait() // the real one waits for its browser callback
	return 1
}

// save writes the login where the real one does.
func save(console bool) error {
	global := readJSON(globalConfig())
	global["oauthAccount"] = map[string]any{"accountUuid": "acc-fake", "emailAddress": "fake@example.com",
		"organizationUuid": "org-fake", "organizationName": "Fake Org"}
	if console {
		global["primaryApiKey"] = "sk-ant-api03-" + random(24)
		return writeJSON(globalConfig(), global, 0o600)
	}
	creds := map[string]any{"claudeAiOauth": map[string]any{
		"accessToken": "sk-ant-oat01-" + random(24), "refreshToken": "sk-ant-ort01-" + random(24),
		"expiresAt": time.Now().Add(8 * time.Hour).UnixMilli(),
		"scopes":    []string{"user:inference", "user:profile", "user:sessions:claude_code"}, "subscriptionType": "max"}}
	if err := writeJSON(credentialsFile(), creds, 0o600); err != nil {
		return err
	}
	return writeJSON(globalConfig(), global, 0o600)
}

func logout() int {
	if err := os.Remove(credentialsFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(os.Stderr, "Logout failed: "+err.Error())
		return 1
	}
	global := readJSON(globalConfig())
	delete(global, "primaryApiKey")
	delete(global, "oauthAccount")
	if err := writeJSON(globalConfig(), global, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "Logout failed: "+err.Error())
		return 1
	}
	fmt.Println("Successfully logged out from your Anthropic account.")
	return 0
}

func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// wait blocks until the process is told to stop, as the real one waits
// (for a browser, for input), and exits as one ended by that signal.
func wait() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	s := <-c
	os.Exit(128 + int(s.(syscall.Signal)))
}
