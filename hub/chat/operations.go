package chat

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// Create starts a conversation with agent agentID: a new agent session
// in the workspace folder, named title (optional; checked as Rename
// does). An unknown agent is NotFound; one not installed, or refusing
// until it is logged in, is a Conflict saying so.
func (m *Manager) Create(ctx context.Context, agentID, title string) (Summary, error) {
	if title != "" {
		var err error
		if title, err = checkTitle(title); err != nil {
			return Summary{}, err
		}
	}
	if err := checkAgent(m.cfg.Runtime.Agents(), agentID); err != nil {
		return Summary{}, err
	}
	m.mu.Lock()
	epoch := m.epochOf(agentID)
	m.mu.Unlock()
	conn, err := m.connection(ctx, agentID)
	if err != nil {
		return Summary{}, err
	}
	defer m.release(conn)
	st, err := conn.NewSession(ctx, m.cfg.Dir)
	m.mu.Lock()
	if err != nil {
		m.loginFailed(agentID, epoch, err)
		m.mu.Unlock()
		return Summary{}, err
	}
	id := agentID + ":" + st.SessionID
	if m.closed || m.convs[id] != nil || st.SessionID == "" {
		m.mu.Unlock()
		return Summary{}, hub.Errorf(hub.Unavailable, "the agent did not open a new session")
	}
	c := m.newConversation(id, agentID, st.SessionID, m.now())
	c.title, c.titleSet, c.conn = title, title != "", conn
	a := m.agent(agentID)
	a.sessions[st.SessionID] = c
	m.convs[id] = c
	m.learn(a, c, st)
	m.version++
	m.inv.fire()
	s := m.summary(c)
	m.mu.Unlock()
	if err := m.persist(); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// Rename names the conversation: title is trimmed and must then hold 1
// to 200 UTF-8 bytes.
func (m *Manager) Rename(id, title string) (Summary, error) {
	title, err := checkTitle(title)
	if err != nil {
		return Summary{}, err
	}
	m.mu.Lock()
	c, err := m.conv(id)
	if err != nil {
		m.mu.Unlock()
		return Summary{}, err
	}
	c.title, c.titleSet = title, true
	m.touched(c)
	s := m.summary(c)
	m.mu.Unlock()
	if err := m.persist(); err != nil {
		return Summary{}, err
	}
	return s, nil
}

// CloseConversation ends the conversation and forgets it: its turn is
// cancelled, its requests settled and its readers ended. The agent keeps
// the session; this child no longer lists it.
func (m *Manager) CloseConversation(id string) error {
	m.mu.Lock()
	c, err := m.conv(id)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	delete(m.convs, id)
	if a := m.agents[c.agentID]; a != nil && a.sessions[c.sessionID] == c {
		delete(a.sessions, c.sessionID)
	}
	c.closed = true
	for _, hm := range c.queue.msgs {
		m.unhold(hm)
	}
	m.settleAll(c, "cancelled")
	if c.turn != nil {
		c.turn.cancel()
	}
	c.changed.fire()
	m.inv.fire()
	m.version++
	m.activityChangedLocked()
	m.mu.Unlock()
	return m.persist()
}

// SendResult is the answer to a sent message: its id, whether it is held
// behind a running turn, and the held queue as it now stands.
type SendResult struct {
	MessageID string          `json:"messageId"`
	Held      bool            `json:"held"`
	Queued    []QueuedMessage `json:"queued"`
}

// Send delivers msg to the conversation's agent, or holds it while a
// turn runs (or the session is being reopened, or earlier messages are
// held): held messages are delivered in order, each as its own turn. A
// message that breaks the attachment rules is Invalid (TooLarge for an
// image over 10 MiB, or text over 1 MiB); a message past the held
// queue's bounds (limits.go: 20 messages, 256 KiB of text and 64 MiB of
// images per conversation, 128 MiB per workspace) is RateLimited; an
// agent no longer installed is a Conflict; images to an agent that said
// at `initialize` it takes none are Invalid (the agent is started to ask
// it, within ctx). A held message is saved before Send returns (held.go);
// one that cannot be saved is not held (Internal). A retried send with
// the same RequestID answers the first result and changes nothing.
func (m *Manager) Send(ctx context.Context, id string, msg Message) (SendResult, error) {
	images, infos, err := checkMessage(msg)
	if err != nil {
		return SendResult{}, err
	}
	descs := m.cfg.Runtime.Agents()
	if len(images) > 0 {
		if err := m.checkImages(ctx, descs, id); err != nil {
			return SendResult{}, err
		}
	}
	m.mu.Lock()
	c, err := m.conv(id)
	if err != nil {
		m.mu.Unlock()
		return SendResult{}, err
	}
	if r, ok := c.sent[msg.RequestID]; ok && msg.RequestID != "" {
		if r.Queued == nil { // remembered across a restart: the queue as it is
			r.Queued = c.queue.list()
		}
		m.mu.Unlock()
		return r, nil
	}
	if err := checkAgent(descs, c.agentID); err != nil {
		m.mu.Unlock()
		return SendResult{}, err
	}
	hm := &heldMessage{QueuedMessage: QueuedMessage{ID: "message:" + m.token(), Text: msg.Text,
		QueuedAt: ms(m.now()), RequestID: msg.RequestID, Attachments: infos}, images: images}
	for range images {
		hm.keys = append(hm.keys, m.token())
	}
	r := SendResult{MessageID: hm.ID}
	if c.turn != nil || c.loading || len(c.queue.msgs) > 0 {
		if err := m.hold(c, hm); err != nil {
			m.mu.Unlock()
			return SendResult{}, err
		}
		r.Held = true
		m.version++
		m.queueChanged(c, "held", hm.ID)
	} else {
		m.deliverLocked(c, hm) // saved before it reaches the agent (runTurn)
	}
	r.Queued = c.queue.list()
	m.remember(c, msg.RequestID, r)
	m.mu.Unlock()
	if !r.Held {
		return r, nil
	}
	// A client told "held" counts on it: the message is saved first.
	if err := m.persist(); err != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if !c.closed && m.removeHeld(c, hm.ID) != nil {
			m.forget(c, msg.RequestID)
			m.queueChanged(c, "removed", hm.ID)
			return SendResult{}, hub.Wrap(hub.Internal, err, "the message could not be saved, so it is not held; send it again")
		}
		// Delivered meanwhile: the agent has it.
	}
	return r, nil
}

// remember records what a send with requestID answered, for retries: the
// latest maxRememberedRequest of them. m.mu held.
func (m *Manager) remember(c *conversation, requestID string, r SendResult) {
	if requestID == "" {
		return
	}
	c.sent[requestID] = r
	c.sentList = append(c.sentList, requestID)
	if len(c.sentList) > maxRememberedRequest {
		delete(c.sent, c.sentList[0])
		c.sentList = c.sentList[1:]
	}
	m.version++
}

// forget drops what remember recorded for requestID. m.mu held.
func (m *Manager) forget(c *conversation, requestID string) {
	if _, ok := c.sent[requestID]; !ok || requestID == "" {
		return
	}
	delete(c.sent, requestID)
	c.sentList = slices.DeleteFunc(c.sentList, func(id string) bool { return id == requestID })
	m.version++
}

// checkImages refuses images for conversation id when its agent takes
// none (chat.AgentInfo.Images, from the agent's promptCapabilities),
// starting the agent if it does not run yet.
func (m *Manager) checkImages(ctx context.Context, descs []AgentDescriptor, id string) error {
	m.mu.Lock()
	c, err := m.conv(id)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if err := checkAgent(descs, c.agentID); err != nil {
		return err
	}
	conn, err := m.connection(ctx, c.agentID)
	if err != nil {
		return err
	}
	defer m.release(conn)
	if !conn.Info().Images {
		return noImages(m.agentName(c.agentID))
	}
	return nil
}

// noImages is the refusal of images for the agent named name.
func noImages(name string) error {
	return hub.Errorf(hub.Invalid, "%s takes no images; send the message without them", name)
}

// RemoveHeld takes a held message out of the queue before it is
// delivered; NotFound when no held message has this id. The removal is
// saved before it answers; one that cannot be saved answers Internal, as
// a rename does: the message stays removed here and the next save keeps
// the removal (until then a crash would bring it back).
func (m *Manager) RemoveHeld(id, messageID string) ([]QueuedMessage, error) {
	m.mu.Lock()
	c, err := m.conv(id)
	if err == nil && m.removeHeld(c, messageID) == nil {
		err = hub.Errorf(hub.NotFound, "no held message has this id")
	}
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	m.version++
	m.queueChanged(c, "removed", messageID)
	q := c.queue.list()
	m.mu.Unlock()
	if err := m.persist(); err != nil {
		return nil, err
	}
	return q, nil
}

// queueChanged restates the held queue to c's readers.
func (m *Manager) queueChanged(c *conversation, kind, messageID string) {
	q := c.queue.list()
	m.emit(c, &Event{Type: EventQueue, Queued: &q, Change: &QueueChange{Kind: kind, MessageID: messageID}})
}

// Cancel asks the agent to end the running turn, which then ends
// `interrupted`; a Conflict when no turn runs. An agent that does not
// end it within CancelGrace has its turn ended anyway.
func (m *Manager) Cancel(ctx context.Context, id string) error {
	m.mu.Lock()
	c, err := m.conv(id)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	t := c.turn
	if t == nil {
		m.mu.Unlock()
		return hub.Errorf(hub.Conflict, "no turn is running")
	}
	if t.cancelled {
		m.mu.Unlock()
		return nil
	}
	t.cancelled = true
	t.grace = m.cfg.Clock.AfterFunc(CancelGrace, t.cancel)
	conn, sid := c.conn, c.sessionID
	m.settleAll(c, "cancelled")
	m.activityChangedLocked()
	m.mu.Unlock()
	if conn == nil {
		t.cancel() // the session is still opening: nothing to tell the agent
		return nil
	}
	if err := conn.Cancel(ctx, sid); err != nil {
		m.log.Warn("the agent refused to cancel its turn", "err", err)
		t.cancel()
	}
	return nil
}

// deriveTitle is a title for a conversation named by nobody: the first
// line of its first message without the characters a title refuses
// (hub.RemoveInvisible), at most 60 characters.
func deriveTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = hub.RemoveInvisible(line)
	if utf8.RuneCountInString(line) > 60 {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:60])) + "…"
	}
	return line
}
