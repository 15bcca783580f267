package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The login methods --auth-methods advertises, as a custom agent whose
// only login interface is ACP would. Their ids and shapes are fixed so
// tests can name them.
const (
	// agentMethodID is the plain agent method: the agent logs in itself.
	agentMethodID = "agent-login"
	// terminalMethodID is the terminal method: `acpagent --login`, with
	// ACPAGENT_LOGIN=1, run in a terminal by the person.
	terminalMethodID = "terminal-login"
	// envMethodPrefix starts the id of an env_var method: env-NAME (its
	// first variable).
	envMethodPrefix = "env-"
)

// logoutsFile is the file of --state where --logout records each logout,
// one line per call.
const logoutsFile = "logouts"

// parseAuthMethods reads --auth-methods: a comma-separated list of
// `agent`, `terminal` and `env:NAME[+NAME…]`, a NAME ending in `?`
// being optional. The terminal method is offered only to a client that
// declares `auth.terminal`, as ACP says.
func parseAuthMethods(list string) ([]acp.AuthMethod, error) {
	var out []acp.AuthMethod
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
		case item == "agent":
			out = append(out, acp.AuthMethod{Agent: &acp.AuthMethodAgent{Id: agentMethodID, Name: "Log in with acpagent"}})
		case item == "terminal":
			out = append(out, acp.AuthMethod{Terminal: &acp.AuthMethodTerminalInline{Type: "terminal", Id: terminalMethodID,
				Name: "Log in in a terminal", Args: []string{"--login"}, Env: map[string]any{"ACPAGENT_LOGIN": "1"}}})
		case strings.HasPrefix(item, "env:"):
			var vars []acp.AuthEnvVar
			for name := range strings.SplitSeq(strings.TrimPrefix(item, "env:"), "+") {
				optional := strings.HasSuffix(name, "?")
				name = strings.TrimSuffix(name, "?")
				if name == "" {
					return nil, fmt.Errorf("--auth-methods: %q names an empty variable", item)
				}
				vars = append(vars, acp.AuthEnvVar{Name: name, Optional: optional, Secret: true})
			}
			out = append(out, acp.AuthMethod{EnvVar: &acp.AuthMethodEnvVarInline{Type: "env_var",
				Id: envMethodPrefix + vars[0].Name, Name: vars[0].Name + " key", Vars: vars}})
		default:
			return nil, fmt.Errorf("--auth-methods: unknown method %q", item)
		}
	}
	return out, nil
}

// offered is the methods of --auth-methods a client with caps may see.
func offered(methods []acp.AuthMethod, caps acp.ClientCapabilities) []acp.AuthMethod {
	var out []acp.AuthMethod
	for _, m := range methods {
		if m.Terminal != nil && !caps.Auth.Terminal {
			continue
		}
		out = append(out, m)
	}
	return out
}

// recordLogout appends a line to --state's logouts file.
func (a *agent) recordLogout() error {
	f, err := os.OpenFile(filepath.Join(a.state, logoutsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString("logout\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
