package chat

import (
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// A coding agent reads its login from its own store on the Hub machine
// (its credentials file), and a running agent process may hold the login
// it read in memory. When a person logs an agent in or out on the Hub
// (or makes another account active), the Hub tells every running
// workspace session (AgentLoginChanged). The session then
//
//   - forgets that the agent asked for a login: the agent list shows its
//     availability afresh, and a refusal by an agent started before the
//     change no longer counts (each agent has a login epoch; a refusal
//     counts only in the epoch its call began in);
//   - moves the agent's catalog revision (the epoch is part of it), so
//     the inventory feed ticks and clients read the agent again;
//   - retires the agent's running connection: no new call gets it, and
//     it is closed once the last call holding it ends. Every call on a
//     connection holds a lease on it for its whole length (a turn from
//     the opening of its session to its end, a reopen, a new session, a
//     configuration change), so a running turn is never interrupted; the
//     next prompt starts a fresh agent, which reads its store.
//
// An agent start in flight when the login changes is not used: it may
// have read the old login, so the caller starts another.

// AgentLoginChanged tells the Manager that agent id's login on the Hub
// machine changed. It forgets a remembered login-required, moves the
// agent's catalog revision (so Inventory's channel fires), and retires
// the agent's running connection, which is closed once no call of it
// runs, without interrupting any; the next call starts a fresh agent. An
// agent the runtime does not know is no change (nil). It returns at once:
// the old agent is closed in the background. After Close it is an
// Unavailable error.
func (m *Manager) AgentLoginChanged(id string) error {
	descs := m.cfg.Runtime.Agents() // outside m.mu: it may look at the disk
	if !slices.ContainsFunc(descs, func(d AgentDescriptor) bool { return d.ID == id }) {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return hub.Errorf(hub.Unavailable, "the workspace session is stopping")
	}
	a := m.agent(id)
	a.epoch++
	a.login = false
	if conn := a.conn; conn != nil {
		a.conn = nil
		m.retired[conn] = false
		if m.leases[conn] == 0 {
			m.closeRetiredLocked(conn)
		}
	}
	m.inv.fire()
	return nil
}

// release ends the caller's lease on conn (from connection); nil is no
// lease. A retired connection whose last lease ends is closed.
func (m *Manager) release(conn AgentConnection) {
	if conn == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases[conn]--; m.leases[conn] > 0 {
		return
	}
	delete(m.leases, conn)
	if closing, retired := m.retired[conn]; retired && !closing && !m.closed {
		m.closeRetiredLocked(conn)
	}
}

// closeRetiredLocked closes the retired conn in the background; watch
// then forgets it. After Close the Manager's own Close does; a conn that
// already ended on its own is left to watch, which says it exited. m.mu
// held.
func (m *Manager) closeRetiredLocked(conn AgentConnection) {
	if m.closed || ended(conn) {
		return
	}
	m.retired[conn] = true
	m.work.Add(1)
	go func() {
		defer m.work.Done()
		if err := conn.Close(); err != nil {
			m.log.Warn("agent did not close cleanly after its login changed", "err", err)
		}
	}()
}
