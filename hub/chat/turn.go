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
	c.failure = nil
	c.delivering = &hm.QueuedMessage
	m.version++
	ctx, cancel := context.WithCancel(m.ctx)
	t := &turn{n: c.turnCount, id: m.token(), cancel: cancel, epoch: m.epochOf(c.agentID)}
	c.turn = t
	if c.title == "" {
		c.title = deriveTitle(hm.Text)
	}
	m.setStatus(c, StatusRunning, "")
	m.touched(c)
	m.activityChangedLocked()
	m.work.Add(1)
	go m.runTurn(ctx, c, t, AgentPrompt{Text: hm.Text, Images: hm.images})
}

// deliverNextLocked delivers the first held message when nothing runs.
// m.mu held.
func (m *Manager) deliverNextLocked(c *conversation) {
	if c.turn != nil || c.loading || c.closed || m.closed {
		return
	}
	if hm := m.nextHeld(c); hm != nil {
		m.version++
		m.queueChanged(c, "delivered", hm.ID)
		m.deliverLocked(c, hm)
	}
}

// runTurn opens the session if needed, prompts the agent and ends the
// turn with what it answered.
func (m *Manager) runTurn(ctx context.Context, c *conversation, t *turn, p AgentPrompt) {
	defer m.work.Done()
	var res AgentTurnResult
	var conn AgentConnection
	var sid string
	// Saved before the agent has it: a crash then never sends it twice.
	err := m.persist()
	if err != nil {
		err = hub.Wrap(hub.Internal, err, "the message could not be recorded as delivered, so it was not sent")
	} else {
		conn, sid, err = m.openSession(ctx, c, true)
	}
	if err == nil && len(p.Images) > 0 && !conn.Info().Images {
		// Held while another agent process ran, or before a restart: this
		// one takes none, so nothing is sent.
		err = noImages(m.agentName(c.agentID))
	}
	if err == nil {
		res, err = conn.Prompt(ctx, sid, p)
	}
	m.mu.Lock()
	m.finishTurn(c, t, conn, res, err)
	m.mu.Unlock()
	m.release(conn) // after the turn ended: a retired agent closes only now
	_ = m.persist() // best effort: logged, and retried by the next save
}

// finishTurn ends t, which ran on conn (nil when no session opened): the
// status says how (see outcome), a usage carrier item keeps the turn's
// tokens, requests still waiting are settled, and the next held message
// is delivered. m.mu held.
func (m *Manager) finishTurn(c *conversation, t *turn, conn AgentConnection, res AgentTurnResult, err error) {
	t.cancel()
	if t.grace != nil {
		t.grace.Stop()
	}
	if c.turn != t {
		return
	}
	c.turn = nil
	c.delivering = nil
	m.version++
	m.closeText(c)
	if c.closed {
		m.activityChangedLocked()
		return
	}
	m.settleAll(c, "cancelled")
	status, message := m.outcome(c, t, conn, res, err)
	if u := res.Usage; u != nil && err == nil {
		it := m.newItem(c, KindAssistantMessage, "usage:"+strconv.Itoa(t.n))
		empty := ""
		it.Markdown, it.Agent = &empty, c.agentID
		it.Usage = &TokenUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite,
			Reasoning: u.Reasoning, CostUSD: u.CostUSD}
		m.upsert(c, it)
	}
	m.setStatus(c, status, message)
	if status == StatusCompleted {
		m.announce(c, hub.NotifyTurnCompleted, t.id)
	}
	m.touched(c)
	m.activityChangedLocked()
	m.deliverNextLocked(c)
}

// outcome maps how a turn ended to a status and its message, adding a
// notice item for a failure.
func (m *Manager) outcome(c *conversation, t *turn, conn AgentConnection, res AgentTurnResult, err error) (Status, string) {
	switch {
	case t.cancelled && (err != nil || res.StopReason != AgentStopRefusal):
		// The user cancelled: however the agent put its end (OpenCode
		// answers end_turn), the turn was interrupted.
		return StatusInterrupted, ""
	case err == nil:
		switch res.StopReason {
		case AgentStopCancelled:
			return StatusInterrupted, ""
		case AgentStopRefusal:
			return StatusFailed, "the agent refused to go on"
		case AgentStopMaxTokens:
			return StatusCompleted, "the agent reached its token limit"
		case AgentStopMaxTurnRequests:
			return StatusCompleted, "the agent reached its limit of requests in one turn"
		}
		return StatusCompleted, ""
	case errors.Is(err, ErrAgentLoginRequired):
		m.loginFailed(c.agentID, t.epoch, err)
		m.notice(c, "error", "login-failed", publicMessage(err))
		return StatusFailed, publicMessage(err)
	}
	if conn != nil && ended(conn) {
		return m.exited(c, conn, nil)
	}
	msg := publicMessage(err)
	it := m.notice(c, "error", "", "The turn failed: "+msg)
	if conn != nil {
		c.failure = &turnFailure{conn: conn, notice: it, at: m.now()}
	}
	return StatusFailed, msg
}

// ExitWindow is how long after a turn failed an exit of its agent is
// taken as the failure's cause. When an agent dies mid-turn, the
// connection sees its output end (and fails the turn's request, ACP's
// -32603) moments before it reaps the process and ends; the exit then
// rewrites the turn's notice. The adapter's reaper takes at most a
// couple of seconds; 5 s covers it with margin.
const ExitWindow = 5 * time.Second

// turnFailure is the last failed turn of a conversation, until its
// agent's exit is known not to be the cause.
type turnFailure struct {
	conn   AgentConnection
	notice *Item
	at     time.Time
}

// ended reports whether conn has ended.
func ended(conn AgentConnection) bool {
	select {
	case <-conn.Done():
		return true
	default:
		return false
	}
}

// exited says that c's turn failed because its agent exited: the notice
// (a new one, or the failure's own, rewritten) names the exit, which is
// the cause logged. m.mu held.
func (m *Manager) exited(c *conversation, conn AgentConnection, it *Item) (Status, string) {
	name := m.agentName(c.agentID)
	err := hub.Wrap(hub.Unavailable, conn.Err(), name+" exited during the turn")
	m.log.Warn("the agent exited during a turn", "agent", c.agentID, "err", err)
	msg := hub.MessageOf(err) + "; the next message starts it again."
	if it == nil {
		m.notice(c, "error", "", msg)
	} else {
		it.Message = msg
		m.upsert(c, it)
	}
	return StatusFailed, "the agent exited"
}

// exitedAfterFailure takes conn's end as the cause of c's last failed
// turn when it ran on conn and failed within ExitWindow. m.mu held.
func (m *Manager) exitedAfterFailure(c *conversation, conn AgentConnection) {
	f := c.failure
	if f == nil || f.conn != conn || c.closed {
		return
	}
	c.failure = nil
	if c.turn != nil || c.status != StatusFailed || m.now().Sub(f.at) > ExitWindow {
		return
	}
	notice := f.notice
	if c.byID[notice.ID] != notice {
		notice = nil // removed to keep the conversation within its bound: say it anew
	}
	status, message := m.exited(c, conn, notice)
	m.setStatus(c, status, message)
}
