package chat

import (
	"context"
	"errors"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// touchLocked starts reopening c's agent session in the background when
// this child has not opened it yet and nothing is doing so, so that a
// conversation a client opens shows its history. Only a reopen is tried
// here; a new session is made when a message needs one. m.mu held.
func (m *Manager) touchLocked(c *conversation) {
	if c.conn != nil || c.loading || c.turn != nil || c.noticed || c.closed || m.closed {
		return
	}
	c.loading = true
	epoch := m.epochOf(c.agentID)
	m.work.Add(1)
	go func() {
		defer m.work.Done()
		// Bounded: messages wait while it runs (c.loading), and an agent
		// that never answers must not hold them for good.
		ctx, cancel := context.WithCancel(m.ctx)
		defer cancel()
		defer m.cfg.Clock.AfterFunc(reopenTimeout, cancel).Stop()
		conn, _, err := m.openSession(ctx, c, false)
		m.release(conn)
		m.mu.Lock()
		defer m.mu.Unlock()
		c.loading = false
		if err != nil && !c.noticed && !c.closed && !m.closed {
			c.noticed = true
			m.loginFailed(c.agentID, epoch, err)
			m.notice(c, "warning", loginCode(err), "This conversation's history could not be reopened: "+publicMessage(err))
		}
		m.deliverNextLocked(c)
	}()
}

// openSession returns c's agent connection and session, starting the
// agent and reopening the session when this child has not: LoadSession
// where the agent supports it (its replay becomes c's items when c has
// none in this generation, and is dropped when it has), otherwise, when
// allowNew, a new session that continues the conversation without the
// agent remembering it (a notice says so). The connection returned is
// leased (connection): the caller releases it when its call is done. On
// failure nothing is leased.
func (m *Manager) openSession(ctx context.Context, c *conversation, allowNew bool) (_ AgentConnection, _ string, err error) {
	conn, err := m.connection(ctx, c.agentID)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if err != nil {
			m.release(conn)
		}
	}()
	m.mu.Lock()
	// One reopen at a time per conversation: two would each replay the
	// history into it. The others wait for it, then look again.
	for c.opening != nil && !c.closed && c.conn != conn {
		ch := c.opening
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, "", hub.Wrap(hub.Unavailable, ctx.Err(), "the conversation's session is still being reopened")
		}
		m.mu.Lock()
	}
	if c.closed {
		m.mu.Unlock()
		return nil, "", hub.Errorf(hub.NotFound, "unknown conversation")
	}
	if c.conn == conn {
		sid := c.sessionID
		m.mu.Unlock()
		return conn, sid, nil
	}
	c.opening = make(chan struct{})
	defer func() {
		m.mu.Lock()
		close(c.opening)
		c.opening = nil
		m.mu.Unlock()
	}()
	a := m.agent(c.agentID)
	sid := c.sessionID
	a.sessions[sid] = c
	c.suppress = len(c.items) > 0
	c.replaying = !c.suppress
	m.mu.Unlock()

	err = hub.Errorf(hub.Conflict, "the agent cannot reopen sessions")
	var st AgentSessionState
	if conn.Info().LoadSession && sid != "" {
		st, err = conn.LoadSession(ctx, sid, m.cfg.Dir)
	}
	m.mu.Lock()
	c.suppress, c.replaying = false, false
	m.closeText(c)
	m.tellInterrupted(c) // after the history, reopened or not
	if err == nil && !c.closed {
		c.conn = conn
		m.learn(a, c, st)
		m.mu.Unlock()
		return conn, sid, nil
	}
	if c.closed || !allowNew {
		m.mu.Unlock()
		if err == nil {
			err = hub.Errorf(hub.NotFound, "unknown conversation")
		}
		return nil, "", err
	}
	m.mu.Unlock()

	st, err = conn.NewSession(ctx, m.cfg.Dir)
	m.mu.Lock()
	if err != nil {
		m.mu.Unlock()
		return nil, "", err // its caller says whether it was for want of a login
	}
	if c.closed {
		m.mu.Unlock()
		return nil, "", hub.Errorf(hub.NotFound, "unknown conversation")
	}
	if a.sessions[sid] == c {
		delete(a.sessions, sid)
	}
	c.sessionID, c.conn = st.SessionID, conn
	a.sessions[st.SessionID] = c
	m.version++
	if !c.noticed || len(c.items) > 0 {
		c.noticed = true
		m.notice(c, "warning", "", "The agent could not reopen this conversation's session, so it continues in a new one: the agent does not remember what came before.")
	}
	m.learn(a, c, st)
	m.mu.Unlock()
	_ = m.persist() // best effort: logged, and retried by the next save
	return conn, st.SessionID, nil
}

// reopenTimeout bounds reopening a conversation's session in the
// background (the agent's replay of a long history included).
const reopenTimeout = 2 * time.Minute

// publicMessage is err's public message, or a generic one.
func publicMessage(err error) string {
	if msg := hub.MessageOf(err); msg != "" {
		return msg
	}
	return "the agent failed"
}

// loginCode is the notice code of err: login-failed when the agent asked
// for a login.
func loginCode(err error) string {
	if errors.Is(err, ErrAgentLoginRequired) {
		return "login-failed"
	}
	return ""
}
