// Package acp is the chat.AgentRuntime of the Agent Client Protocol: the
// coding agents the workspace session child talks to (Claude Code, Codex,
// Gemini CLI, OpenCode, or any command configured as an agent), each a
// process speaking JSON-RPC over its stdin and stdout, driven with
// github.com/coder/acp-go-sdk (pinned at v0.13.5).
//
// What the SDK does not do safely is done here (see the research note on
// agents and ACP):
//   - The agent's stdout is read by this package's own line reader
//     (wire.go), never by the SDK's: the SDK queues notifications in a
//     fixed 1,024-slot queue and closes the connection when a burst fills
//     it. Here `session/update` notifications are decoded and handed to
//     the sink as they are read, one after another, so a burst only slows
//     the agent down (its writes wait for the reader). Only responses and
//     the agent's fs/terminal requests reach the SDK.
//   - Updates are decoded from the raw `sessionUpdate` frame (decode.go),
//     so variants the SDK does not know (`notice`, `compaction_update`)
//     are not lost.
//   - Lines are read whatever their length up to MaxLine (64 MiB, an
//     image replay); a line over 10 MiB, which would kill the SDK's
//     reader, never reaches it: a request is refused and a response turned
//     into an error. A longer line is skipped.
//   - Permission requests and questions (elicitations) are handled on the
//     reader too, so the sink sees them in order with the updates.
//   - Each agent runs in its own process group, killed as a group, in the
//     workspace folder, with the session's sanitized environment.
//   - `fs/*` requests and a terminal's working folder go through the
//     workspace boundary (adapters/internal/confine, fs.go): resolved and
//     opened in one step beneath the folder, never through a last link
//     or a hard link, written by rename.
//   - `terminal/*` runs any command the agent names, as the Hub's user,
//     there with the session's environment (terminal.go): at most 32
//     terminals per workspace across its agents, each keeping at most
//     2 MiB of output in a ring, each shown in its session's conversation
//     as a command item (trace.go), each killed with its agent's
//     connection and, through the parent-death signal, with the workspace
//     child (spawn_linux.go).
//
// An agent whose command is not found is `not-installed`; one answering
// -32000 reports hub.ErrAgentLoginRequired; neither is a crash. An agent
// given an API key (Options.AgentEnv) is authenticated with it at start.
package acp

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

var _ chat.AgentRuntime = (*Runtime)(nil)

// Agent is one agent the runtime knows: its id (no ':'), its name for
// people and the command that starts it speaking ACP on stdio.
type Agent struct {
	ID      string
	Name    string
	Command []string
	// Keys are the agent's methods that log in with an API key from its
	// environment (see KeyMethod and Options.AgentEnv).
	Keys []KeyMethod
}

// KnownAgents are the agents built in, with the commands the research
// note measured (each answers ACP protocol version 1).
var KnownAgents = []Agent{
	{ID: "claude", Name: "Claude Code", Command: []string{"claude-agent-acp"}},
	{ID: "codex", Name: "Codex", Command: []string{"codex-acp"},
		Keys: []KeyMethod{{Method: "api-key", Vars: []string{"CODEX_API_KEY", "OPENAI_API_KEY"}}}},
	{ID: "gemini", Name: "Gemini CLI", Command: []string{"gemini", "--acp"},
		Keys: []KeyMethod{{Method: "gemini-api-key", Vars: []string{"GEMINI_API_KEY"}}}},
	{ID: "opencode", Name: "OpenCode", Command: []string{"opencode", "acp"}},
}

// Options configure a Runtime. The zero value runs the known agents with
// an empty environment.
type Options struct {
	// Commands replaces the command of a known agent, or adds an agent
	// (named after its id) with its command. An id holds no ':'.
	Commands map[string][]string
	// Env is the environment of every agent and terminal: the session's
	// sanitized one. Its PATH finds the commands.
	Env []string
	// AgentEnv adds entries to one agent's environment (by agent id),
	// after Env: the API key someone gave the Hub for that agent, such as
	// GEMINI_API_KEY=…. An agent that advertises a method for a key it
	// finds there (KeyMethod, or ACP's `env_var` methods) is authenticated
	// with it at Start. Terminals the agent opens do not get these
	// entries. The values are secrets: never logged.
	AgentEnv map[string][]string
	// Terminals shows the terminals agents open (terminal/create) to the
	// workspace's people, read-only: each terminal's output is teed to
	// its view, which never blocks the command. nil: not shown.
	Terminals chat.TerminalWatcher
	// StartTimeout bounds starting an agent and its `initialize`; default
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Logger receives diagnostics: never a message or the agent's output
	// beyond a bounded excerpt at debug level. Default discards.
	Logger *slog.Logger
}

// DefaultStartTimeout bounds an agent's start; `initialize` takes 0.1 to
// 1.5 s for the agents measured.
const DefaultStartTimeout = 30 * time.Second

// Runtime is the ACP chat.AgentRuntime. It is safe for concurrent use.
type Runtime struct {
	opts   Options
	agents []Agent
	log    *slog.Logger
	slots  terminalSlots // the terminals of every agent: the workspace's bound
}

// New returns a Runtime over the known agents and opts.Commands.
func New(opts Options) *Runtime {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	agents := slices.Clone(KnownAgents)
	ids := make([]string, 0, len(opts.Commands))
	for id := range opts.Commands {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		cmd := opts.Commands[id]
		if id == "" || strings.Contains(id, ":") || len(cmd) == 0 {
			log.Warn("ignoring an agent command", "agent", id)
			continue
		}
		if i := slices.IndexFunc(agents, func(a Agent) bool { return a.ID == id }); i >= 0 {
			agents[i].Command = slices.Clone(cmd)
			continue
		}
		agents = append(agents, Agent{ID: id, Name: id, Command: slices.Clone(cmd)})
	}
	return &Runtime{opts: opts, agents: agents, log: log.With("component", "acp")}
}

// ForChild is New as the workspace child wires it (child.Options):
// the child's environment, the Hub's agent commands and the child's
// shells, where the agents' terminals show.
func ForChild(env []string, commands map[string][]string, terminals chat.TerminalWatcher, log *slog.Logger) chat.AgentRuntime {
	return New(Options{Env: env, Commands: commands, Terminals: terminals, Logger: log})
}

// Agents lists the agents; one is available when its command is found on
// the environment's PATH (or, given as a path, exists and is executable).
func (r *Runtime) Agents() []chat.AgentDescriptor {
	out := make([]chat.AgentDescriptor, 0, len(r.agents))
	for _, a := range r.agents {
		av := chat.AgentNotInstalled
		if _, err := r.lookPath(a.Command[0]); err == nil {
			av = chat.AgentAvailable
		}
		out = append(out, chat.AgentDescriptor{ID: a.ID, Name: a.Name, Availability: av})
	}
	return out
}

// lookPath finds name as exec.LookPath does, but on the agents' PATH
// rather than the child's own.
func (r *Runtime) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	path := ""
	for _, kv := range r.opts.Env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// agent returns the agent with id.
func (r *Runtime) agent(id string) (Agent, bool) {
	i := slices.IndexFunc(r.agents, func(a Agent) bool { return a.ID == id })
	if i < 0 {
		return Agent{}, false
	}
	return r.agents[i], true
}

// Start starts agent id in dir and initializes it (see chat.AgentRuntime).
func (r *Runtime) Start(ctx context.Context, id, dir string, sink chat.AgentSink) (chat.AgentConnection, error) {
	a, ok := r.agent(id)
	if !ok {
		return nil, hub.Errorf(hub.NotFound, "unknown agent %q", id)
	}
	path, err := r.lookPath(a.Command[0])
	if err != nil {
		return nil, hub.Wrap(hub.Conflict, chat.ErrAgentNotInstalled, a.Name+" is not installed on the Hub's machine")
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.StartTimeout)
	defer cancel()
	return start(ctx, r, a, path, dir, sink)
}
