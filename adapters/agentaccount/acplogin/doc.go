// Package acplogin is the agent-login driver of a custom agent: one added
// with `wharf serve --agent ID=COMMAND`, an ACP agent the Hub knows
// nothing else about. Its only login interface is what ACP's `initialize`
// answer declares, and the driver offers exactly that, no more:
//
//   - `authMethods`: an `env_var` method becomes an env method (set its
//     variables where the Hub runs); a `terminal` method a command method
//     whose command is the agent's command plus the method's args (and
//     env), shell-quoted for display; a plain agent method a command
//     method "Log in inside <name>: <method's name>" with the agent's own
//     command (the agent logs in inside itself).
//   - `agentCapabilities.auth.logout`: the only change the Hub can make.
//     ACP's `logout` names no credential, so the driver takes the
//     target's id (the agent's id) as the id of "the agent's own login";
//     the status never lists that login, because nothing says whether
//     it exists.
//
// ACP has no status query, no URL hand-back, no code or redirect
// submission and no activate, so: the status's one target (the agent)
// lists as credentials only what the runtime's environment shows — an env
// credential, not removable, its variables named and never their values,
// for each env_var method whose required variables are all set (the
// first is marked active: it is the one a workspace session's agent
// authenticates with, adapters/acp picking the same way). Whether the
// agent holds a login of its own is not knowable, and the status does not
// guess. Key and browser logins are refused Invalid (field "method") with
// a message saying what to do on the Hub machine instead.
//
// The runtime is the agent itself, started in its own process group with
// the runtime's environment and kept for the runtime's life: one stdio
// ACP connection that only logs in. The client declares no file or
// terminal access and refuses every request the agent makes; it declares
// `auth.terminal`, so the agent lists its terminal methods, which the Hub
// shows as commands for a person to run. Bounds: `initialize` answers
// within InitializeTimeout, `logout` within LogoutTimeout, a line to the
// agent is written within writeTimeout; a line from the agent longer than
// MaxLine ends the runtime (nothing ACP sends here is near it), the
// agent's requests are answered in line, its notifications dropped, so
// nothing it sends queues up; its stderr is discarded, never logged.
package acplogin
