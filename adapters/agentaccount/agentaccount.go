// Package agentaccount is the hub.AgentLogins adapter: the Hub machine's
// coding agents reached through the login interface each really offers,
// one driver per agent in a package of its own — claude over Claude
// Code's `auth` subcommands (its login in a terminal), codex over `codex
// app-server`'s account methods, gemini over Gemini CLI's own store and
// its code login in a terminal, opencode over `opencode serve`'s
// provider-auth API, and acplogin for an agent added with `--agent`,
// which declares its logins only through ACP. ACP alone cannot do more:
// it has no status query, no URL hand-back, no code or redirect
// submission and no activate.
//
// Every driver runs its agent with Options.Env, which should be what a
// workspace session's agent gets too (credenv.AgentEnv of the Hub's
// environment), so a login lands in the store the sessions' agents read.
package agentaccount

import (
	"log/slog"
	"slices"

	"github.com/wharfhub/wharf/adapters/agentaccount/acplogin"
	"github.com/wharfhub/wharf/adapters/agentaccount/claude"
	"github.com/wharfhub/wharf/adapters/agentaccount/codex"
	"github.com/wharfhub/wharf/adapters/agentaccount/gemini"
	"github.com/wharfhub/wharf/adapters/agentaccount/opencode"
	"github.com/wharfhub/wharf/hub"
)

// Options configure the drivers.
type Options struct {
	// Env is the login runtimes' environment: HOME, PATH and the
	// variables that locate the agents' stores; never the Hub's secrets.
	Env []string
	// Custom are the agents added with `--agent` beyond the known ones,
	// by id, with their ACP command; each is reached through ACP.
	Custom map[string][]string
	// Logger receives diagnostics; never a key, code, address or token.
	Logger *slog.Logger
}

// Logins is the set of drivers.
type Logins struct{ drivers []hub.AgentLoginDriver }

var _ hub.AgentLogins = (*Logins)(nil)

// Known are the ids of the agents with a driver of their own.
var Known = []string{"claude", "codex", "gemini", "opencode"}

// New returns a driver per agent: the known ones, then the custom ones
// sorted by id. A custom entry with a known id is ignored (the known
// agent's own login interface serves it, whatever ACP command the chat
// runs).
func New(opts Options) *Logins {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	log := func(id string) *slog.Logger { return opts.Logger.With("agent", id) }
	l := &Logins{drivers: []hub.AgentLoginDriver{
		claude.New(claude.Options{Env: opts.Env, Logger: log("claude")}),
		codex.New(codex.Options{Env: opts.Env, Logger: log("codex")}),
		gemini.New(gemini.Options{Env: opts.Env, Logger: log("gemini")}),
		opencode.New(opencode.Options{Env: opts.Env, Logger: log("opencode")}),
	}}
	ids := make([]string, 0, len(opts.Custom))
	for id := range opts.Custom {
		if !slices.Contains(Known, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		l.drivers = append(l.drivers, acplogin.New(acplogin.Options{ID: id, Name: id, Command: opts.Custom[id], Env: opts.Env, Logger: log(id)}))
	}
	return l
}

// Drivers implements hub.AgentLogins.
func (l *Logins) Drivers() []hub.AgentLoginDriver { return l.drivers }
