package hub

import (
	"context"
	"errors"
	"time"
)

// The agent-accounts port: each agent's own login interface on the Hub
// machine (a CLI's auth subcommands, `opencode serve`'s provider-auth
// API, `codex app-server`'s account methods), behind one shape. ACP alone
// cannot do this: it has no status query, no URL hand-back, no code or
// redirect submission and no activate.

// ErrAgentNotInstalled is what AgentLoginDriver.Start returns (wrapped)
// when the agent's command is not found.
var ErrAgentNotInstalled = errors.New("agent not installed")

// AgentLogins is the set of agents whose logins the Hub manages.
type AgentLogins interface {
	// Drivers lists one driver per agent, in the order people see them;
	// the list is fixed for the value's life.
	Drivers() []AgentLoginDriver
}

// AgentLoginAgent names an agent and how it is reached.
type AgentLoginAgent struct {
	ID   string // the agent's id, as the chat API names it ("claude")
	Name string // for people ("Claude Code")
	// Command is the program the driver runs ("codex"), as looked for on
	// PATH; a not-installed agent's message names it.
	Command string
	// LoginCommand is what a person would run by hand on the Hub machine
	// ("claude auth login").
	LoginCommand string
}

// AgentLoginDriver reaches one agent's login interface.
type AgentLoginDriver interface {
	Agent() AgentLoginAgent
	// Start starts the agent's login runtime (a server process it talks
	// to, or nothing beyond checking the command for a driver that runs
	// one command per call) and returns once it answers, or fails within
	// ctx. A command that is not found is an error satisfying
	// errors.Is(err, ErrAgentNotInstalled); any other failure's public
	// message says why, without the agent's output.
	Start(ctx context.Context) (AgentLoginRuntime, error)
}

// AgentLoginRuntime is a started login runtime. The core serializes the
// changes (LoginWithKey, Login, Logout, Activate) of one runtime; Status
// may run beside them. Every error's public message is safe to show: a
// refusal by the agent is Invalid (with Details.Field when the agent
// named the input), anything else is Unavailable or Internal. No error,
// status or challenge ever carries a key, code or address the runtime
// was given.
type AgentLoginRuntime interface {
	// Status reads the agent's current login state from its store. It
	// never starts a login and never spends model tokens.
	Status(ctx context.Context) (AgentLoginStatus, error)
	// LoginWithKey saves a key login for req.Target through the agent;
	// the key goes to the agent and is dropped.
	LoginWithKey(ctx context.Context, req AgentKeyLogin) error
	// Login starts a browser or device-code login and returns once the
	// agent has handed back the URL to open.
	Login(ctx context.Context, req AgentLoginStart) (AgentLoginFlow, error)
	// Logout removes a saved login from the agent's store, for every
	// workspace. One the agent cannot remove is Invalid.
	Logout(ctx context.Context, ref AgentCredentialRef) error
	// Activate makes a saved credential the active one of its target,
	// where the status's capabilities say it can.
	Activate(ctx context.Context, ref AgentCredentialRef) error
	// Done is closed once the runtime has ended, by Close or on its own
	// (a crash): the core then reports the agent unavailable.
	Done() <-chan struct{}
	// Close stops the runtime and every flow it started, and returns once
	// its processes are gone.
	Close()
}

// AgentLoginFlow is one login the agent is waiting to complete.
type AgentLoginFlow interface {
	// Challenge is what to show the person: fixed once Login returned.
	Challenge() AgentLoginChallenge
	// SubmitCode hands the code the login page showed to the agent. The
	// outcome arrives through Done and Err.
	SubmitCode(ctx context.Context, code string) error
	// SubmitRedirect requests address once on the Hub machine, with GET,
	// following no redirect, discarding the answer, within a 10 s bound.
	// The core gives only an address it checked against the challenge's
	// Callback (hub/agentaccount.CheckRedirect). A listener that does not
	// answer is Invalid.
	SubmitRedirect(ctx context.Context, address string) error
	// Done is closed once the login settled: completed, failed or
	// cancelled.
	Done() <-chan struct{}
	// Err is nil when the login completed, else why it did not (a public
	// message). Valid once Done is closed.
	Err() error
	// Cancel abandons the login; Done closes soon after. Idempotent.
	Cancel()
}

// AgentLoginChallenge is what a started login asks of the person.
type AgentLoginChallenge struct {
	// URL is the page to open.
	URL string
	// Instructions say what to do there, for people.
	Instructions string
	// Completion is how the login finishes (agentaccount.CompletionOf
	// decides it from the URL where the agent does not say).
	Completion AgentLoginCompletion
	// UserCode is the code to enter on the URL's page (device logins).
	UserCode string
	// Callback is, for a redirect login, the loopback address the agent
	// listens on ("http://localhost:1455/auth/callback"): a pasted
	// address must have its port and path.
	Callback string
	// ExpiresAt is when the agent gives up on the login; zero when it
	// does not say.
	ExpiresAt time.Time
}
