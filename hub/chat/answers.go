package chat

import (
	"context"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// AnswerPermission answers the agent's permission request with one of its
// choices. requestID is the core's id of the request (its item's id
// without `permission:`), unique for the conversation's life: an answer
// reaches only the request it was given for. An unknown request is
// NotFound; one already answered or settled is a Conflict; a choice the
// request did not offer is Invalid.
func (m *Manager) AnswerPermission(id, requestID, choiceID string) error {
	m.mu.Lock()
	c, r, err := m.pendingRequest(id, requestID, KindPermission)
	if err == nil && !slices.ContainsFunc(r.item.Choices, func(ch Choice) bool { return ch.ID == choiceID }) {
		err = hub.Errorf(hub.Invalid, "the permission request has no choice %q", choiceID)
	}
	if err != nil {
		m.mu.Unlock()
		return err
	}
	m.take(c, requestID) // a second answer meets a Conflict
	m.mu.Unlock()
	err = r.src.conn.AnswerPermission(r.agentID, choiceID)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answered(c, r.item, err, func() { r.item.ChoiceID = choiceID })
}

// Answer is the user's answer to a question: Action accept (with the
// Content the question's schema asks for), decline or cancel.
type Answer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// AnswerQuestion answers the agent's question; requestID is the core's id
// of it, as AnswerPermission's. An unknown question is NotFound; one
// already answered or settled is a Conflict; an action other than accept,
// decline or cancel, or content without accept, is Invalid.
func (m *Manager) AnswerQuestion(id, requestID string, a Answer) error {
	switch {
	case a.Action != "accept" && a.Action != "decline" && a.Action != "cancel":
		return hub.Errorf(hub.Invalid, "action must be accept, decline or cancel")
	case a.Action != "accept" && a.Content != nil:
		return hub.Errorf(hub.Invalid, "only an accepted question carries content")
	}
	m.mu.Lock()
	c, r, err := m.pendingRequest(id, requestID, KindQuestion)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	m.take(c, requestID)
	m.mu.Unlock()
	err = r.src.conn.AnswerQuestion(r.agentID, AgentAnswer(a))
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answered(c, r.item, err, func() { r.item.Action = a.Action })
}

// pendingRequest finds the request of kind awaiting an answer in
// conversation id under our requestID. A request this child never issued
// is NotFound; one it issued and that no longer waits is a Conflict.
// m.mu held.
func (m *Manager) pendingRequest(id, requestID, kind string) (*conversation, *request, error) {
	c, err := m.conv(id)
	if err != nil {
		return nil, nil, err
	}
	it := c.byID[kind+":"+requestID]
	r := c.pending[requestID]
	switch {
	case it == nil:
		return nil, nil, hub.Errorf(hub.NotFound, "unknown %s request", kind)
	case r == nil || r.item != it || r.src.conn == nil:
		return nil, nil, hub.Errorf(hub.Conflict, "the %s request was already answered or withdrawn", kind)
	}
	return c, r, nil
}

// answered records the outcome of answering it: the agent took the
// answer (set records it), or the request was no longer pending there
// (settled, a Conflict). m.mu held.
func (m *Manager) answered(c *conversation, it *Item, err error, set func()) error {
	defer m.activityChangedLocked()
	if err != nil {
		if !c.closed && it.State == "pending" {
			it.State = "cancelled"
			m.upsert(c, it)
		}
		if hub.KindOf(err) == hub.NotFound {
			return hub.Errorf(hub.Conflict, "the %s request was already answered or withdrawn", it.Kind)
		}
		return err
	}
	if it.State == "pending" {
		it.State = "answered"
		set()
		if !c.closed {
			m.upsert(c, it)
		}
	}
	return nil
}

// SetConfiguration changes the conversation's model and mode to ones its
// agent offers (AgentEntry); absent fields stay as they are. Variants are
// refused: ACP has none.
func (m *Manager) SetConfiguration(ctx context.Context, id string, cfg Configuration) (Configuration, error) {
	switch {
	case cfg.Variant != "":
		return Configuration{}, hub.Errorf(hub.Invalid, "this agent offers no variants")
	case cfg.Model == "" && cfg.Mode == "":
		return Configuration{}, hub.Errorf(hub.Invalid, "nothing to configure: give a model or a mode")
	}
	m.mu.Lock()
	c, err := m.conv(id)
	var epoch uint64
	if err == nil {
		epoch = m.epochOf(c.agentID)
	}
	m.mu.Unlock()
	if err != nil {
		return Configuration{}, err
	}
	conn, sid, err := m.openSession(ctx, c, true)
	if err != nil {
		m.mu.Lock()
		m.loginFailed(c.agentID, epoch, err)
		m.mu.Unlock()
		return Configuration{}, err
	}
	defer m.release(conn)
	m.mu.Lock()
	a := m.agent(c.agentID)
	offered := func(cs []AgentChoice, v string) bool {
		return slices.ContainsFunc(cs, func(ch AgentChoice) bool { return ch.ID == v })
	}
	switch {
	case cfg.Model != "" && !offered(a.models, cfg.Model):
		err = hub.Errorf(hub.Invalid, "the agent offers no model %q", cfg.Model)
	case cfg.Mode != "" && !offered(a.modes, cfg.Mode):
		err = hub.Errorf(hub.Invalid, "the agent offers no mode %q", cfg.Mode)
	}
	current := c.config
	m.mu.Unlock()
	if err != nil {
		return Configuration{}, err
	}
	if cfg.Model != "" && cfg.Model != current.Model {
		if err := conn.SetModel(ctx, sid, cfg.Model); err != nil {
			return Configuration{}, err
		}
	}
	if cfg.Mode != "" && cfg.Mode != current.Mode {
		if err := conn.SetMode(ctx, sid, cfg.Mode); err != nil {
			return Configuration{}, err
		}
	}
	m.mu.Lock()
	next := c.config
	if cfg.Model != "" {
		next.Model = cfg.Model
	}
	if cfg.Mode != "" {
		next.Mode = cfg.Mode
	}
	if !c.closed {
		m.configure(c, next)
	}
	m.mu.Unlock()
	_ = m.persist() // best effort: logged, and retried by the next save
	return next, nil
}
