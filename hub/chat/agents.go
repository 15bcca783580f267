package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/wharfhub/wharf/hub"
)

// agentState is what the Manager knows of one agent: its connection, if
// started, and its catalog (the models and modes it offered). Guarded by
// Manager.mu.
type agentState struct {
	id       string
	conn     AgentConnection
	starting chan struct{} // closed when the Start in flight ends
	sessions map[string]*conversation
	login    bool // the agent asked for a login, and nothing worked since
	// epoch counts the changes of the agent's login on the Hub machine
	// (AgentLoginChanged): it moves the catalog revision, and a refusal
	// for want of a login counts only when it is of the current epoch.
	epoch  uint64
	models []AgentChoice
	modes  []AgentChoice
}

// AgentEntry is one agent as the chat API lists it (ChatAgent).
type AgentEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Availability is available, not-installed or login-required (the
	// agent refused a request until it is logged in).
	Availability    string        `json:"availability"`
	Models          []AgentChoice `json:"models"`
	Modes           []AgentChoice `json:"modes"`
	Capabilities    []string      `json:"capabilities"`
	CatalogRevision string        `json:"catalogRevision"`
}

// AgentChoice is a model or mode an agent offers.
type AgentChoice struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Agents lists every agent the runtime knows, with what this child has
// learned of its models and modes (an agent tells them once a session is
// open, so they are empty until then).
func (m *Manager) Agents() []AgentEntry {
	descs := m.cfg.Runtime.Agents() // outside m.mu: it may look at the disk
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.agentEntriesLocked(descs)
}

// agentEntriesLocked is the agent list over the runtime's descs. m.mu held.
func (m *Manager) agentEntriesLocked(descs []AgentDescriptor) []AgentEntry {
	out := make([]AgentEntry, 0, len(descs))
	for _, d := range descs {
		e := AgentEntry{ID: d.ID, Name: d.Name, Availability: string(d.Availability),
			Models: []AgentChoice{}, Modes: []AgentChoice{}, Capabilities: []string{"conversation-rename"}}
		var epoch uint64
		if a := m.agents[d.ID]; a != nil {
			if a.login && d.Availability == AgentAvailable {
				e.Availability = "login-required"
			}
			e.Models, e.Modes = choices(a.models), choices(a.modes)
			epoch = a.epoch
		}
		b, _ := json.Marshal(e)
		// The epoch moves the revision after a login change even when the
		// entry reads the same: a client then reads the agent again.
		sum := sha256.Sum256(strconv.AppendUint(append(b, '#'), epoch, 10))
		e.CatalogRevision = hex.EncodeToString(sum[:6])
		out = append(out, e)
	}
	return out
}

func choices(cs []AgentChoice) []AgentChoice {
	out := make([]AgentChoice, 0, len(cs))
	for _, c := range cs {
		out = append(out, AgentChoice{ID: c.ID, Name: c.Name})
	}
	return out
}

// agentName is the name of agent id for people; the id when unknown.
// Names are the runtime's when the Manager started: an agent's
// availability changes, its name does not, and summaries need it under
// m.mu, where the runtime is not asked.
func (m *Manager) agentName(id string) string {
	if name, ok := m.names[id]; ok {
		return name
	}
	return id
}

// checkAgent refuses an agent that is unknown among descs, the runtime's
// descriptors (NotFound), or not installed (Conflict). Callers read descs
// before taking m.mu: the runtime may look at the disk.
func checkAgent(descs []AgentDescriptor, id string) error {
	i := slices.IndexFunc(descs, func(d AgentDescriptor) bool { return d.ID == id })
	switch {
	case i < 0:
		return hub.Errorf(hub.NotFound, "unknown agent %q", id)
	case descs[i].Availability == AgentNotInstalled:
		return hub.Wrap(hub.Conflict, ErrAgentNotInstalled, descs[i].Name+" is not installed on the Hub's machine")
	}
	return nil
}

// agent returns the state of agent id, creating it. m.mu held.
func (m *Manager) agent(id string) *agentState {
	a := m.agents[id]
	if a == nil {
		a = &agentState{id: id, sessions: map[string]*conversation{}}
		m.agents[id] = a
	}
	return a
}

// connection returns the running connection of agent id, starting the
// agent when none runs; concurrent callers share one start. The
// connection is leased to the caller, who releases it (release) once its
// call is done: a connection retired by a login change is closed only
// when no lease holds it (login.go).
func (m *Manager) connection(ctx context.Context, id string) (AgentConnection, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, hub.Errorf(hub.Unavailable, "the workspace session is stopping")
		}
		a := m.agent(id)
		if a.conn != nil {
			select {
			case <-a.conn.Done():
				a.conn = nil // ended, and watch has not seen it yet: start anew
			default:
				conn := a.conn
				m.leases[conn]++
				m.mu.Unlock()
				return conn, nil
			}
		}
		if ch := a.starting; ch != nil {
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, hub.Wrap(hub.Unavailable, ctx.Err(), "the agent did not start")
			}
		}
		ch := make(chan struct{})
		a.starting = ch
		epoch := a.epoch
		m.mu.Unlock()

		src := &source{agentID: id}
		conn, err := m.cfg.Runtime.Start(ctx, id, m.cfg.Dir, func(sid string, u AgentUpdate) { m.apply(src, sid, u) })
		m.mu.Lock()
		a.starting = nil
		close(ch)
		switch {
		case err == nil && m.closed:
			m.mu.Unlock()
			conn.Close()
			return nil, hub.Errorf(hub.Unavailable, "the workspace session is stopping")
		case err == nil && a.epoch != epoch:
			// The login changed while it started: it may have read the
			// old one. Nothing has used it yet; start a fresh one.
			m.mu.Unlock()
			if err := conn.Close(); err != nil {
				m.log.Warn("agent did not close cleanly", "agent", id, "err", err)
			}
			continue
		case err == nil:
			a.conn, src.conn = conn, conn
			m.leases[conn]++
			m.work.Add(1)
			go m.watch(a, conn)
		}
		m.mu.Unlock()
		return conn, err
	}
}

// watch forgets conn once it ends: its sessions must be reopened, and
// the requests it left waiting are settled. A connection the core closed
// itself, retired by a login change, did not exit: no failure is blamed
// on it.
func (m *Manager) watch(a *agentState, conn AgentConnection) {
	defer m.work.Done()
	select {
	case <-conn.Done():
	case <-m.ctx.Done():
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if a.conn == conn {
		a.conn = nil
	}
	closedByUs := m.retired[conn]
	delete(m.retired, conn)
	if err := conn.Err(); err != nil {
		m.log.Warn("agent connection ended", "agent", a.id, "err", err)
	}
	for _, c := range m.convs {
		if c.conn == conn {
			c.conn = nil
		}
		m.settleFrom(c, conn)
		if closedByUs {
			if c.failure != nil && c.failure.conn == conn {
				c.failure = nil
			}
			continue
		}
		m.exitedAfterFailure(c, conn)
	}
	m.activityChangedLocked()
}

// learn records what a session state says of the agent's catalog and of
// c's configuration. m.mu held.
func (m *Manager) learn(a *agentState, c *conversation, st AgentSessionState) {
	changed := false
	if st.Models != nil && !sameChoices(a.models, st.Models) {
		a.models, changed = st.Models, true
	}
	if st.Modes != nil && !sameChoices(a.modes, st.Modes) {
		a.modes, changed = st.Modes, true
	}
	if a.login {
		a.login, changed = false, true
	}
	if changed {
		m.inv.fire()
	}
	if c == nil {
		return
	}
	cfg := c.config
	if st.Model != "" {
		cfg.Model = st.Model
	}
	if st.Mode != "" {
		cfg.Mode = st.Mode
	}
	m.configure(c, cfg)
}

// configure sets c's configuration, telling readers when it changed.
func (m *Manager) configure(c *conversation, cfg Configuration) {
	if cfg == c.config {
		return
	}
	c.config = cfg
	m.emit(c, &Event{Type: EventConfiguration, Configuration: &cfg})
	m.version++
}

func sameChoices(a, b []AgentChoice) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loginFailed records that agent id asked for a login, when it did in
// the login epoch the refused call began in: a refusal by an agent that
// still held the login before the last change says nothing of the
// current one. m.mu held.
func (m *Manager) loginFailed(id string, epoch uint64, err error) {
	if errors.Is(err, ErrAgentLoginRequired) {
		if a := m.agent(id); !a.login && a.epoch == epoch {
			a.login = true
			m.inv.fire()
		}
	}
}

// epochOf is the login epoch of agent id. m.mu held.
func (m *Manager) epochOf(id string) uint64 { return m.agent(id).epoch }
