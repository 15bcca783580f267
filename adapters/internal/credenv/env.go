package credenv

import (
	"slices"
	"strings"
)

// allowedEnv names the variables a child inherits from the base
// environment; LC_* variables are allowed too. Everything else stays with
// the Hub: tokens and API keys (ANTHROPIC_API_KEY, OPENAI_API_KEY,
// GEMINI_API_KEY, CODEX_API_KEY, GH_TOKEN, ...), WHARF_* settings, GIT_*
// overrides that would redirect the workspace's git, proxies, agent
// sockets and the desktop's keyring (DBUS_SESSION_BUS_ADDRESS,
// XDG_RUNTIME_DIR). Credentials reach a session only through its own
// projection, never by inheritance.
var allowedEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "TZ": true, "TERM": true, "TMPDIR": true,
}

// agentStoreEnv names the variables by which a coding agent finds its own
// store (its login, settings and sessions) when it is not under HOME's
// default place. They are paths or a choice of store, never a secret, and
// an agent that lacked them would look in the wrong place: the login a
// person made on the Hub machine would not be found. Since HOME passes,
// they let nothing be read that could not be already; they only say
// where.
//
//	XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME
//	    OpenCode (its auth.json is in $XDG_DATA_HOME/opencode), and the
//	    XDG base directories the agents' helpers honour
//	CODEX_HOME          Codex: auth.json and config.toml (default ~/.codex)
//	CLAUDE_CONFIG_DIR   Claude Code: .credentials.json (default ~/.claude)
//	GEMINI_CLI_HOME     Gemini CLI: the home its .gemini is under (its
//	                    core's homedir(), packages/core/src/utils/paths.ts)
//	GEMINI_FORCE_FILE_STORAGE, GEMINI_FORCE_ENCRYPTED_FILE_STORAGE
//	    Gemini CLI: which of its stores its OAuth login is kept in (the
//	    plain oauth_creds.json, or the encrypted file)
//
// git cannot be moved by them: the projection sets GIT_CONFIG_GLOBAL,
// which replaces $XDG_CONFIG_HOME/git/config, and resets the credential
// helpers, so git's credential-store and cache files are never read.
var agentStoreEnv = map[string]bool{
	"XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_CACHE_HOME": true,
	"CODEX_HOME": true, "CLAUDE_CONFIG_DIR": true, "GEMINI_CLI_HOME": true,
	"GEMINI_FORCE_FILE_STORAGE": true, "GEMINI_FORCE_ENCRYPTED_FILE_STORAGE": true,
}

// AgentEnv filters base, the Hub's environment, down to what a coding
// agent may inherit: the basics (PATH, HOME, USER, LOGNAME, SHELL, LANG,
// LC_*, TZ, TERM, TMPDIR) and the variables that locate each agent's own
// store (agentStoreEnv), nothing else. A workspace session's child starts
// from it (Projection.Apply), and the Hub's agent-login runtimes run in
// it, so a login made on the Hub lands in the very store every session's
// agent then reads. It keeps base's order; when a name repeats, the last
// value wins, as it would for exec.Cmd; entries without '=' are dropped.
func AgentEnv(base []string) []string {
	out := make([]string, 0, len(allowedEnv)+len(agentStoreEnv)+4)
	at := map[string]int{}
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !(allowedEnv[name] || agentStoreEnv[name] || strings.HasPrefix(name, "LC_")) {
			continue
		}
		if i, seen := at[name]; seen {
			out[i] = kv
			continue
		}
		at[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// InheritedNames are the names AgentEnv keeps, sorted; LC_* variables are
// kept too. A backend that cannot filter a Go slice (a shell on another
// machine) filters by them.
func InheritedNames() []string {
	var names []string
	for _, m := range []map[string]bool{allowedEnv, agentStoreEnv} {
		for n := range m {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}
