package acp

import (
	"context"
	"errors"
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// KeyMethod is an authentication method an agent advertises that takes
// an API key from the agent's environment: Gemini CLI's `gemini-api-key`
// reads GEMINI_API_KEY, Codex's `api-key` reads CODEX_API_KEY or
// OPENAI_API_KEY. Neither says so in ACP (they are plain methods with a
// vendor `_meta`), hence a table per agent; a method of ACP's own
// `env_var` type names its variables and needs no entry.
type KeyMethod struct {
	// Method is the authMethod id the agent advertises.
	Method string
	// Vars are the variables that carry the key: any one set suffices.
	Vars []string
}

// agentEnv is the environment agent a starts with: the session's, then
// what Options.AgentEnv gives that agent (its key), which wins.
func (r *Runtime) agentEnv(a Agent) []string {
	extra := r.opts.AgentEnv[a.ID]
	if len(extra) == 0 {
		return r.opts.Env
	}
	return append(slices.Clip(r.opts.Env), extra...)
}

// keyMethod picks, from the methods the agent advertised in order, the
// first whose key env holds: an `env_var` method with every required
// variable set, or a method of a's table with one of its variables set.
// "" when none: the agent is left to ask for a login (-32000).
func keyMethod(a Agent, methods []acpsdk.AuthMethod, env []string) string {
	set := func(name string) bool { return lookupEnv(env, name) != "" }
	for _, m := range methods {
		if ev := m.EnvVar; ev != nil {
			required := 0
			ok := true
			for _, v := range ev.Vars {
				if !v.Optional {
					required++
					ok = ok && set(v.Name)
				}
			}
			if ok && required > 0 {
				return ev.Id
			}
			continue
		}
		id := ""
		if m.Agent != nil {
			id = m.Agent.Id
		}
		for _, km := range a.Keys {
			if km.Method == id && id != "" && slices.ContainsFunc(km.Vars, set) {
				return id
			}
		}
	}
	return ""
}

// lookupEnv is the value of name in env, the last entry winning as it
// does for exec.Cmd.
func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// authenticate logs the agent in with the key its environment carries,
// when it offers a method for one: what an agent given a key needs before
// `session/new` (Gemini CLI and Codex answer -32000 until then). A
// refused key is a login the agent still needs; the key itself never
// reaches an error or a log, only the method's id.
func (c *conn) authenticate(ctx context.Context, methods []acpsdk.AuthMethod) error {
	method := keyMethod(c.agent, methods, c.cmd.Env)
	if method == "" {
		return nil
	}
	_, err := c.sdk.Authenticate(ctx, acpsdk.AuthenticateRequest{MethodId: method})
	if err == nil {
		c.log.Debug("authenticated with a key from the environment", "method", method)
		return nil
	}
	var re *acpsdk.RequestError
	if errors.As(err, &re) && ctx.Err() == nil {
		c.log.Info("the agent refused its key", "method", method, "code", re.Code)
		return hub.Wrap(hub.Conflict, chat.ErrAgentLoginRequired, c.agent.Name+" refused the key it was given ("+method+")")
	}
	return c.failure(err, "could not authenticate")
}
