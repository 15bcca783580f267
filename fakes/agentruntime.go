package fakes

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

var _ chat.AgentRuntime = (*AgentRuntime)(nil)

// AgentRuntime is a chat.AgentRuntime whose agents live in memory. A test
// either drives each turn by hand (every Prompt arrives on Turns as an
// AgentTurn to answer) or, with Autoplay, lets every turn play the script
// its prompt names (package agentscript), as the scripted ACP agent does.
// The zero value is not ready; use NewAgentRuntime.
type AgentRuntime struct {
	// Turns receives every turn when Autoplay is off. It is unbuffered:
	// a test that does not read it holds the turn's Prompt.
	Turns chan *AgentTurn

	mu         sync.Mutex
	agents     []chat.AgentDescriptor
	autoplay   bool
	noLoad     bool
	deaf       bool // Cancel is ignored
	noImages   bool // agents say they take no images
	startErr   map[string]error
	sessionErr map[string]error
	conns      map[string][]*AgentConn
	sessions   map[string]*fakeSession // by session id, across connections: the agent's own store
	nextID     int
	loadGate   <-chan struct{} // LoadSession waits for it when set
	loads      int             // LoadSession calls
}

// NewAgentRuntime returns a runtime knowing agents (all available unless
// they say otherwise).
func NewAgentRuntime(agents ...chat.AgentDescriptor) *AgentRuntime {
	return &AgentRuntime{Turns: make(chan *AgentTurn), agents: slices.Clone(agents), startErr: map[string]error{},
		sessionErr: map[string]error{}, conns: map[string][]*AgentConn{}, sessions: map[string]*fakeSession{}}
}

// SetAutoplay makes every later turn play its script by itself.
func (r *AgentRuntime) SetAutoplay(on bool) { r.mu.Lock(); r.autoplay = on; r.mu.Unlock() }

// SetLoadSession says whether agents can reopen sessions (default yes).
func (r *AgentRuntime) SetLoadSession(on bool) { r.mu.Lock(); r.noLoad = !on; r.mu.Unlock() }

// SetImages says whether agents started later take images in prompts
// (default yes): the Info of their connections says so.
func (r *AgentRuntime) SetImages(on bool) { r.mu.Lock(); r.noImages = !on; r.mu.Unlock() }

// SetIgnoreCancel makes agents ignore Cancel, as a stubborn one would.
func (r *AgentRuntime) SetIgnoreCancel(on bool) { r.mu.Lock(); r.deaf = on; r.mu.Unlock() }

// SetAvailability changes whether agent id is installed.
func (r *AgentRuntime) SetAvailability(id string, a chat.AgentAvailability) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.agents {
		if r.agents[i].ID == id {
			r.agents[i].Availability = a
		}
	}
}

// HoldLoads makes LoadSession wait until gate is closed (or its context
// ends) before it replays; nil lets loads through again.
func (r *AgentRuntime) HoldLoads(gate <-chan struct{}) {
	r.mu.Lock()
	r.loadGate = gate
	r.mu.Unlock()
}

// Loads reports how many times LoadSession was called.
func (r *AgentRuntime) Loads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.loads
}

// FailStart makes Start of agent id fail with err (nil: succeed again).
func (r *AgentRuntime) FailStart(id string, err error) {
	r.mu.Lock()
	r.startErr[id] = err
	r.mu.Unlock()
}

// FailSessions makes NewSession of agent id fail with err (nil: succeed).
func (r *AgentRuntime) FailSessions(id string, err error) {
	r.mu.Lock()
	r.sessionErr[id] = err
	r.mu.Unlock()
}

// LoginRequired is the error a real runtime returns for ACP's -32000.
func LoginRequired(name string) error {
	return hub.Wrap(hub.Conflict, chat.ErrAgentLoginRequired, name+" needs a login")
}

// Connections returns the connections started for agent id, oldest first.
func (r *AgentRuntime) Connections(id string) []*AgentConn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.conns[id])
}

// Agents lists the agents.
func (r *AgentRuntime) Agents() []chat.AgentDescriptor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.agents)
}

// Start starts agent id as the contract says: NotFound, a Conflict for
// one not installed, the injected failure, or a new connection.
func (r *AgentRuntime) Start(ctx context.Context, id, dir string, sink chat.AgentSink) (chat.AgentConnection, error) {
	if err := ctx.Err(); err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "the agent did not start")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.agents, func(d chat.AgentDescriptor) bool { return d.ID == id })
	switch {
	case i < 0:
		return nil, hub.Errorf(hub.NotFound, "unknown agent %q", id)
	case r.agents[i].Availability == chat.AgentNotInstalled:
		return nil, hub.Wrap(hub.Conflict, chat.ErrAgentNotInstalled, r.agents[i].Name+" is not installed")
	case r.startErr[id] != nil:
		return nil, r.startErr[id]
	}
	c := &AgentConn{r: r, agent: r.agents[i], sink: sink, done: make(chan struct{}), pending: map[string]pendingRequest{},
		turns: map[string]*AgentTurn{}, images: !r.noImages}
	r.conns[id] = append(r.conns[id], c)
	return c, nil
}

// fakeSession is what the fake agent keeps of a session: its history,
// replayed by LoadSession, and its configuration.
type fakeSession struct {
	agent       string
	dir         string
	history     []chat.AgentUpdate
	model, mode string
}

// state is the session's AgentSessionState.
func (s *fakeSession) state(id string) chat.AgentSessionState {
	st := chat.AgentSessionState{SessionID: id, Model: s.model, Mode: s.mode}
	for _, m := range agentscript.Models {
		st.Models = append(st.Models, chat.AgentChoice{ID: m[0], Name: m[1]})
	}
	for _, m := range agentscript.Modes {
		st.Modes = append(st.Modes, chat.AgentChoice{ID: m[0], Name: m[1]})
	}
	return st
}

// newSessionID returns a fresh session id. r.mu held.
func (r *AgentRuntime) newSessionID() string {
	r.nextID++
	return fmt.Sprintf("session-%d", r.nextID)
}
