package chat

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// CancelGrace is how long a cancelled turn may take to end before the
// core ends it itself, for an agent that ignores `session/cancel`.
const CancelGrace = 10 * time.Second

// deliverLocked delivers hm as a new turn: the user's message becomes an
// item, the conversation runs, and the turn goes on outside the lock.
// m.mu held.
func (m *Manager) deliverLocked(c *conversation, hm *heldMessage) {
	m.closeText(c)
	it := m.newItem(c, KindUserMessage, "")
	it.Text, it.Attachments = hm.Text, hm.Attachments
	m.upsert(c, it)
	c.turnCount++
	ctx, cancel := context.WithCancel(m.ctx)
	t := &turn{n: c.turnCount, cancel: cancel}
	c.turn = t
	if c.title == "" {
		c.title = deriveTitle(hm.Text)
	}
	m.setStatus(c, StatusRunning, "")
	m.touched(c)
	m.activityChangedLocked()
	m.work.Add(1)
	go m.runTurn(ctx, c, t, hub.AgentPrompt{Text: hm.Text, Images: hm.images})
}

// deliverNextLocked delivers the first held message when nothing runs.
// m.mu held.
func (m *Manager) deliverNextLocked(c *conversation) {
	if c.turn != nil || c.loading || c.closed || m.closed {
		return
	}
	if hm := c.queue.next(); hm != nil {
		m.queueChanged(c, "delivered", hm.ID)
		m.deliverLocked(c, hm)
	}
}

// runTurn opens the session if needed, prompts the agent and ends the
// turn with what it answered.
func (m *Manager) runTurn(ctx context.Context, c *conversation, t *turn, p hub.AgentPrompt) {
	defer m.work.Done()
	var res hub.AgentTurnResult
	conn, sid, err := m.openSession(ctx, c, true)
	if err == nil {
		res, err = conn.Prompt(ctx, sid, p)
	}
	m.mu.Lock()
	m.finishTurn(c, t, res, err)
	m.mu.Unlock()
	_ = m.persist() // best effort: logged, and retried by the next save
}

// finishTurn ends t: the status says how (see outcome), a usage carrier
// item keeps the turn's tokens, requests still waiting are settled, and
// the next held message is delivered. m.mu held.
func (m *Manager) finishTurn(c *conversation, t *turn, res hub.AgentTurnResult, err error) {
	t.cancel()
	if t.grace != nil {
		t.grace.Stop()
	}
	if c.turn != t {
		return
	}
	c.turn = nil
	m.closeText(c)
	if c.closed {
		m.activityChangedLocked()
		return
	}
	m.settleAll(c, "cancelled")
	status, message := m.outcome(c, t, res, err)
	if u := res.Usage; u != nil && err == nil {
		it := m.newItem(c, KindAssistantMessage, "usage:"+strconv.Itoa(t.n))
		empty := ""
		it.Markdown, it.Agent = &empty, c.agentID
		it.Usage = &TokenUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
			Reasoning: u.Reasoning, CostUSD: u.CostUSD}
		m.upsert(c, it)
	}
	m.setStatus(c, status, message)
	m.touched(c)
	m.activityChangedLocked()
	m.deliverNextLocked(c)
}

// outcome maps how a turn ended to a status and its message, adding a
// notice item for a failure.
func (m *Manager) outcome(c *conversation, t *turn, res hub.AgentTurnResult, err error) (Status, string) {
	switch {
	case t.cancelled && (err != nil || res.StopReason != hub.AgentStopRefusal):
		// The user cancelled: however the agent put its end (OpenCode
		// answers end_turn), the turn was interrupted.
		return StatusInterrupted, ""
	case err == nil:
		switch res.StopReason {
		case hub.AgentStopCancelled:
			return StatusInterrupted, ""
		case hub.AgentStopRefusal:
			return StatusFailed, "the agent refused to go on"
		case hub.AgentStopMaxTokens:
			return StatusCompleted, "the agent reached its token limit"
		case hub.AgentStopMaxTurnRequests:
			return StatusCompleted, "the agent reached its limit of requests in one turn"
		}
		return StatusCompleted, ""
	case errors.Is(err, hub.ErrAgentLoginRequired):
		m.loginFailed(c.agentID, err)
		m.notice(c, "error", "login-failed", publicMessage(err))
		return StatusFailed, publicMessage(err)
	}
	msg := publicMessage(err)
	m.notice(c, "error", "", "The turn failed: "+msg)
	return StatusFailed, msg
}
