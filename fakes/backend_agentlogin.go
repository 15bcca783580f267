package fakes

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// The fake sessions' coding agents: the catalog revision of each, which
// the inventory feed's ticks carry, and the Hub's word that an agent's
// login changed (WorkspaceSession.AgentLoginChanged), which moves it. The
// Backend records every such word for the tests, and can fail or hold
// them.

// agentLogins is the Backend's record of its sessions' agents and of the
// login changes they were told of. Guarded by Backend.mu.
type agentLogins struct {
	agents   []string                                // the agents every session knows (SetAgents)
	epochs   map[*workspaceSession]map[string]uint64 // login changes taken, by session and agent
	told     map[string][]string                     // the agents each workspace's sessions were told of, in order
	calls    int                                     // the calls begun on running sessions, of any workspace
	fail     map[string]error                        // by workspace
	hold     chan struct{}                           // calls wait for it to close; nil when not held
	inFlight int                                     // calls running now
	most     int                                     // the most that ever ran at once
	changed  chan struct{}                           // closed and replaced whenever inFlight changes
}

// SetAgents says which coding agents every session knows, from now on
// (none by default): each has a catalog revision in the inventory feed's
// ticks, which moves when the session is told the agent's login changed.
// The sessions of a Backend that knows none send the bare opening tick.
func (b *Backend) SetAgents(ids ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.logins.agents = slices.Clone(ids)
}

// AgentLoginsTold returns the agents whose login change the sessions of
// workspace ws were told of, in order, refused calls included (an ended
// session's too).
func (b *Backend) AgentLoginsTold(ws string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.logins.told[ws])
}

// FailAgentLogins makes AgentLoginChanged of the sessions of ws fail with
// err from now on (after counting the call); nil ends that.
func (b *Backend) FailAgentLogins(ws string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.logins.fail == nil {
		b.logins.fail = map[string]error{}
	}
	b.logins.fail[ws] = err
}

// HoldAgentLogins makes every AgentLoginChanged from now on wait until
// release is called, its ctx ends (Unavailable) or its session ends.
// Calling release again does nothing.
func (b *Backend) HoldAgentLogins() (release func()) {
	gate := make(chan struct{})
	b.mu.Lock()
	b.logins.hold = gate
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.logins.hold == gate {
				b.logins.hold = nil
			}
			b.mu.Unlock()
			close(gate)
		})
	}
}

// WaitAgentLogins returns once told calls of AgentLoginChanged have
// begun on running sessions in all (of any workspace) and exactly running
// of them run now, or with ctx's error.
func (b *Backend) WaitAgentLogins(ctx context.Context, told, running int) error {
	for {
		b.mu.Lock()
		made, now, changed := b.logins.calls, b.logins.inFlight, b.logins.wait()
		b.mu.Unlock()
		if made == told && now == running {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// MostAgentLoginsAtOnce reports the most calls of AgentLoginChanged that
// ever ran at once.
func (b *Backend) MostAgentLoginsAtOnce() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.logins.most
}

// wait returns a channel closed when inFlight next changes. b.mu held.
func (l *agentLogins) wait() <-chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// running moves inFlight by delta (a call starts, +1, or ends). b.mu
// held.
func (l *agentLogins) running(delta int) {
	if delta > 0 {
		l.calls++
	}
	l.inFlight += delta
	l.most = max(l.most, l.inFlight)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// inventoryTick is the inventory feed's tick for session s: the catalog
// revision of each agent it knows. b.mu held.
func (b *Backend) inventoryTick(s *workspaceSession) []byte {
	tick := struct {
		Type     string            `json:"type"`
		Catalogs map[string]string `json:"catalogs,omitempty"`
	}{Type: "conversation.inventory"}
	for _, id := range b.logins.agents {
		if tick.Catalogs == nil {
			tick.Catalogs = map[string]string{}
		}
		tick.Catalogs[id] = id + "-" + strconv.FormatUint(b.logins.epochs[s][id], 10)
	}
	data, err := json.Marshal(tick)
	if err != nil {
		panic("fakes: an inventory tick does not encode: " + err.Error())
	}
	return data
}

// AgentLoginChanged records the call, waits while calls are held, then
// fails as FailAgentLogins says, or moves the agent's catalog revision and
// ticks every open inventory feed of the session; an agent the sessions
// do not know (SetAgents) is no change. An ended session, or a ctx that
// ends first, is Unavailable.
func (s *workspaceSession) AgentLoginChanged(ctx context.Context, agent string) error {
	if err := ctx.Err(); err != nil {
		return hub.Wrap(hub.Unavailable, err, "session did not answer")
	}
	b := s.b
	b.mu.Lock()
	l := &b.logins
	if l.told == nil {
		l.told = map[string][]string{}
	}
	l.told[s.id] = append(l.told[s.id], agent)
	select {
	case <-s.done:
		b.mu.Unlock()
		return hub.Errorf(hub.Unavailable, "session has ended")
	default:
	}
	gate := l.hold
	l.running(+1)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		l.running(-1)
		b.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return hub.Wrap(hub.Unavailable, ctx.Err(), "session did not answer")
		case <-s.done:
			return hub.Errorf(hub.Unavailable, "session has ended")
		}
	}
	b.mu.Lock()
	if err := l.fail[s.id]; err != nil {
		b.mu.Unlock()
		return err
	}
	if !slices.Contains(l.agents, agent) {
		b.mu.Unlock()
		return nil
	}
	if l.epochs == nil {
		l.epochs = map[*workspaceSession]map[string]uint64{}
	}
	if l.epochs[s] == nil {
		l.epochs[s] = map[string]uint64{}
	}
	l.epochs[s][agent]++
	tick := hub.FeedFrame{Kind: hub.FrameData, Data: b.inventoryTick(s)}
	open := slices.Clone(b.feeds.opened[feedKey{s.id, hub.TopicInventory, ""}])
	b.mu.Unlock()
	for _, f := range open {
		if f.s == s {
			f.Send(tick)
		}
	}
	return nil
}
