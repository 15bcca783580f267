package hub

import "encoding/json"

// Agent accounts: the logins of the Hub machine's coding agents, written
// to each agent's own store (its credentials file, its keyring). They
// apply to every workspace and every Hub user. The Hub keeps no agent
// secret: a key, code or pasted address goes to the agent's own login
// interface and is dropped, and no record here ever holds one.

// AgentAccounts is the listing every agent-accounts operation answers:
// each agent's login state and the logins in progress.
type AgentAccounts struct {
	Agents   []AgentAccount      `json:"agents"`
	Attempts []AgentLoginAttempt `json:"attempts"` // sorted by StartedAt
}

// AgentRuntimeState is how far the Hub's short-lived login runtime of an
// agent is.
type AgentRuntimeState string

// The runtime states.
const (
	// AgentRuntimeIdle: no runtime runs and none was needed yet.
	AgentRuntimeIdle AgentRuntimeState = "idle"
	// AgentRuntimeStarting: a runtime is starting; the client polls.
	AgentRuntimeStarting AgentRuntimeState = "starting"
	// AgentRuntimeReady: the runtime answered; the status is current.
	AgentRuntimeReady AgentRuntimeState = "ready"
	// AgentRuntimeNotInstalled: the agent's command was not found; the
	// message names it.
	AgentRuntimeNotInstalled AgentRuntimeState = "not-installed"
	// AgentRuntimeUnavailable: the runtime failed or stopped answering;
	// the next request starts it again.
	AgentRuntimeUnavailable AgentRuntimeState = "unavailable"
)

// AgentAccount is one agent's login state in the listing.
type AgentAccount struct {
	Agent string            `json:"agent"` // the agent's id, as the chat API names it
	Name  string            `json:"name"`
	State AgentRuntimeState `json:"state"`
	// Message says why the state is not ready, for people; never a secret.
	Message string `json:"message,omitempty"`
	// Command is the program the Hub looks for to reach the agent's login
	// interface (named when it is not installed).
	Command string `json:"command"`
	// LoginCommand is what a person would run in a terminal on the Hub
	// machine to log the agent in by hand.
	LoginCommand string `json:"loginCommand"`
	// The rest is what the agent's login interface reported, as of
	// StatusAt; empty until the runtime first answered.
	AgentLoginStatus
	// StatusAt is when the status was read (epoch ms); 0 when never.
	StatusAt int64 `json:"statusAt"`
}

// AgentLoginStatus is what an agent's login interface reports.
type AgentLoginStatus struct {
	Version      string                   `json:"version,omitempty"`
	Capabilities AgentAccountCapabilities `json:"capabilities"`
	// Account is the vendor account the agent is logged in with, when the
	// agent has one (Claude Code, Codex); nil otherwise.
	Account *AgentVendorAccount `json:"account,omitempty"`
	// Targets are the providers a login is for, with their saved logins
	// and the methods that make a new one.
	Targets []AgentLoginTarget `json:"targets"`
}

// AgentAccountCapabilities are the operations an agent's login interface
// offers: logging in, logging out, and choosing the active credential of
// a provider among several.
type AgentAccountCapabilities struct {
	Login    bool `json:"login"`
	Logout   bool `json:"logout"`
	Activate bool `json:"activate"`
}

// AgentVendorAccount describes the account an agent is logged in with.
type AgentVendorAccount struct {
	// Source is where the login comes from: subscription, console,
	// api-key, env-api-key, env-token, api-key-helper, third-party, none
	// or unknown.
	Source       string `json:"source"`
	Email        string `json:"email,omitempty"`
	Organization string `json:"organization,omitempty"`
	Plan         string `json:"plan,omitempty"`
	Provider     string `json:"provider,omitempty"`
}

// AgentLoginTarget is a provider (or integration) an agent logs in to.
type AgentLoginTarget struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Connected   bool               `json:"connected"`
	Credentials []AgentCredential  `json:"credentials"`
	Methods     []AgentLoginMethod `json:"methods"`
}

// AgentCredential kinds.
const (
	AgentCredentialKey    = "key"
	AgentCredentialOAuth  = "oauth"
	AgentCredentialSaved  = "saved"
	AgentCredentialEnv    = "env"
	AgentCredentialConfig = "config"
	AgentCredentialOther  = "other"
)

// AgentCredential is one saved login of a target. Its id is the agent's
// (what logout and activate name); the credential itself never leaves the
// agent.
type AgentCredential struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Kind  string `json:"kind"` // one of the AgentCredential… kinds
	// Active is the credential the agent uses for its target.
	Active bool `json:"active"`
	// Removable is whether logout can remove it (an environment key, a
	// configuration file or a third-party cloud login cannot be).
	Removable bool `json:"removable"`
	// Variables name the environment variables an env credential comes
	// from.
	Variables []string `json:"variables,omitempty"`
}

// AgentLoginMethod kinds.
const (
	AgentMethodKey     = "key"     // a key typed in: hubConnectAgentAccountKey
	AgentMethodOAuth   = "oauth"   // a browser or device login: hubStartAgentAccountLogin
	AgentMethodEnv     = "env"     // set a variable where the Hub runs; nothing to submit
	AgentMethodCommand = "command" // run a command on the Hub machine; nothing to submit
)

// AgentLoginMethod is one way to log in to a target.
type AgentLoginMethod struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"` // one of the AgentMethod… kinds
	Label string `json:"label"`
	// Fields are the extra answers the method asks for (key and oauth).
	Fields []AgentLoginField `json:"fields"`
	// Completion is how an oauth login is finished, when known before it
	// starts.
	Completion AgentLoginCompletion `json:"completion,omitempty"`
	// Variables are the environment variables an env method reads.
	Variables []string `json:"variables,omitempty"`
	// Command is what a command method runs.
	Command string `json:"command,omitempty"`
}

// AgentLoginField is one answer a method asks for.
type AgentLoginField struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Kind is text or select.
	Kind string `json:"kind"`
	// ValueType is string, number, boolean or list.
	ValueType   string             `json:"valueType"`
	Required    bool               `json:"required"`
	Secret      bool               `json:"secret,omitempty"`
	Placeholder string             `json:"placeholder,omitempty"`
	Description string             `json:"description,omitempty"`
	Options     []AgentFieldOption `json:"options,omitempty"`
	// When lists conditions on other answers, all of which must hold for
	// the field to be asked.
	When []AgentFieldCondition `json:"when,omitempty"`
}

// AgentFieldOption is one choice of a select field.
type AgentFieldOption struct {
	Value string `json:"value"`
	Label string `json:"label"`
	Hint  string `json:"hint,omitempty"`
}

// AgentFieldCondition holds when the answer to Key is (op eq) or is not
// (op neq) Value.
type AgentFieldCondition struct {
	Key   string `json:"key"`
	Op    string `json:"op"`
	Value string `json:"value"`
}

// AgentLoginCompletion is how a browser login is finished.
type AgentLoginCompletion string

// The completions.
const (
	// CompletionCode: the page shows a code that is pasted back.
	CompletionCode AgentLoginCompletion = "code"
	// CompletionRedirect: the browser lands on a loopback address of the
	// Hub machine (which a phone cannot reach); that address is pasted
	// back and the Hub requests it once.
	CompletionRedirect AgentLoginCompletion = "redirect"
	// CompletionDevice: the person enters a code shown here on the page
	// the URL opens; nothing is pasted back.
	CompletionDevice AgentLoginCompletion = "device"
)

// AgentAttemptState is where a login attempt is.
type AgentAttemptState string

// The attempt states. Pending is the only unsettled one.
const (
	AttemptPending   AgentAttemptState = "pending"
	AttemptComplete  AgentAttemptState = "complete"
	AttemptFailed    AgentAttemptState = "failed"
	AttemptExpired   AgentAttemptState = "expired"
	AttemptCancelled AgentAttemptState = "cancelled"
)

// AgentLoginAttempt is a login in progress, or settled a short while ago.
type AgentLoginAttempt struct {
	ID           string               `json:"id"`
	Agent        string               `json:"agent"`
	Target       string               `json:"target"`
	Method       string               `json:"method"`
	URL          string               `json:"url"`
	Instructions string               `json:"instructions"`
	Completion   AgentLoginCompletion `json:"completion"`
	// UserCode is the code a device login shows, to enter on the page
	// the URL opens ("" for other completions).
	UserCode  string            `json:"userCode,omitempty"`
	State     AgentAttemptState `json:"state"`
	Message   string            `json:"message,omitempty"`
	StartedAt int64             `json:"startedAt"` // epoch ms
	ExpiresAt int64             `json:"expiresAt"` // epoch ms
}

// The requests of the agent-accounts operations. Their limits and checks
// are hub/agentaccount's.

// AgentKeyLogin logs Agent in to Target with a key.
type AgentKeyLogin struct {
	Agent, Target, Method string
	Key                   string            // secret
	Answers               map[string]string // the method's fields; may be secret
}

// AgentLoginStart starts a browser or device-code login.
type AgentLoginStart struct {
	Agent, Target, Method string
	Answers               map[string]string
}

// AgentCredentialRef names a saved login: logout and activate.
type AgentCredentialRef struct {
	Agent, Target, Credential string
}

// MarshalJSON writes a method with the fields of its kind only: fields
// (and completion) for key and oauth, variables for env, command for
// command; the contract's method shapes are closed.
func (m AgentLoginMethod) MarshalJSON() ([]byte, error) {
	type base struct {
		ID    string `json:"id"`
		Kind  string `json:"kind"`
		Label string `json:"label"`
	}
	b := base{m.ID, m.Kind, m.Label}
	switch m.Kind {
	case AgentMethodEnv:
		v := m.Variables
		if v == nil {
			v = []string{}
		}
		return json.Marshal(struct {
			base
			Variables []string `json:"variables"`
		}{b, v})
	case AgentMethodCommand:
		return json.Marshal(struct {
			base
			Command string `json:"command"`
		}{b, m.Command})
	}
	f := m.Fields
	if f == nil {
		f = []AgentLoginField{}
	}
	return json.Marshal(struct {
		base
		Fields     []AgentLoginField    `json:"fields"`
		Completion AgentLoginCompletion `json:"completion,omitempty"`
	}{b, f, m.Completion})
}
