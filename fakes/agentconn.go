package fakes

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

var _ chat.AgentConnection = (*AgentConn)(nil)

// AgentConn is one started fake agent.
type AgentConn struct {
	r     *AgentRuntime
	agent chat.AgentDescriptor
	sink  chat.AgentSink
	// images is what the agent said of images at its start: an agent's
	// capabilities are fixed for a connection.
	images bool

	mu        sync.Mutex
	done      chan struct{}
	err       error
	nextReq   int
	pending   map[string]pendingRequest // by request id
	turns     map[string]*AgentTurn
	Cancelled []string // the sessions Cancel was honoured for

	sinkMu sync.Mutex // the sink is called one call at a time, as the port says
}

// pendingRequest is a request awaiting the user: where its answer goes,
// and the session it is of.
type pendingRequest struct {
	answer chan any
	sid    string
}

// emit hands u to the sink, one call at a time.
func (c *AgentConn) emit(sid string, u chat.AgentUpdate) {
	c.sinkMu.Lock()
	defer c.sinkMu.Unlock()
	c.sink(sid, u)
}

// AgentTurn is one Prompt of a fake agent, for the test to play.
type AgentTurn struct {
	Conn      *AgentConn
	SessionID string
	Prompt    chat.AgentPrompt
	ctx       context.Context
	end       chan turnEnd
	once      sync.Once
	mu        sync.Mutex
	asked     []string // the requests of this turn
}

type turnEnd struct {
	res chat.AgentTurnResult
	err error
}

// Context ends when the turn's Prompt was cancelled by its caller.
func (t *AgentTurn) Context() context.Context { return t.ctx }

// Send reports u about the turn's session, as the agent would.
func (t *AgentTurn) Send(u chat.AgentUpdate) { t.Conn.send(t.SessionID, u) }

// End ends the turn: Prompt returns res and err. Later calls do nothing.
func (t *AgentTurn) End(res chat.AgentTurnResult, err error) {
	t.once.Do(func() { t.end <- turnEnd{res, err} })
}

// Ask sends a permission request (or a question, for a
// chat.AgentQuestionRequest) and returns where its answer arrives: the
// option id (string) or the chat.AgentAnswer, or nil once it is settled
// without one. The request id is filled in and returned.
func (t *AgentTurn) Ask(req chat.AgentUpdate) (string, <-chan any) {
	c := t.Conn
	c.mu.Lock()
	c.nextReq++
	id := "request-" + strconv.Itoa(c.nextReq)
	ch := make(chan any, 1)
	c.pending[id] = pendingRequest{answer: ch, sid: t.SessionID}
	c.mu.Unlock()
	t.mu.Lock()
	t.asked = append(t.asked, id)
	t.mu.Unlock()
	switch r := req.(type) {
	case chat.AgentPermissionRequest:
		r.RequestID = id
		req = r
	case chat.AgentQuestionRequest:
		r.RequestID = id
		req = r
	}
	c.emit(t.SessionID, req)
	return id, ch
}

// Withdraw settles a pending request without an answer, as an agent that
// gives up on it.
func (t *AgentTurn) Withdraw(requestID string) {
	if t.Conn.settle(requestID) {
		t.Conn.emit(t.SessionID, chat.AgentRequestSettled{RequestID: requestID, Reason: "withdrawn"})
	}
}

// send delivers u through the sink and records it in the session's
// history (requests excepted), so LoadSession replays it.
func (c *AgentConn) send(sid string, u chat.AgentUpdate) {
	c.r.mu.Lock()
	if s := c.r.sessions[sid]; s != nil {
		s.history = append(s.history, u)
	}
	c.r.mu.Unlock()
	c.emit(sid, u)
}

// settle removes a pending request, answering nil; false when it was not
// pending.
func (c *AgentConn) settle(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	if !ok {
		return false
	}
	delete(c.pending, id)
	p.answer <- nil
	return true
}

// Crash ends the connection as an agent exiting would: Done closes, Err
// is err, every call in flight fails and every pending request is
// settled as cancelled.
func (c *AgentConn) Crash(err error) { c.end(err) }

func (c *AgentConn) end(err error) {
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return
	default:
	}
	c.err = err
	close(c.done)
	pending := c.pending
	c.pending = map[string]pendingRequest{}
	c.mu.Unlock()
	for id, p := range pending {
		p.answer <- nil
		c.emit(p.sid, chat.AgentRequestSettled{RequestID: id, Reason: "cancelled"})
	}
}

// Info reports what the agent supports.
func (c *AgentConn) Info() chat.AgentInfo {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	return chat.AgentInfo{Name: c.agent.Name, Version: "fake", LoadSession: !c.r.noLoad, ListSessions: true, Images: c.images}
}

func (c *AgentConn) alive() error {
	select {
	case <-c.done:
		return hub.Wrap(hub.Unavailable, c.err, "the agent has exited")
	default:
		return nil
	}
}

// NewSession opens a session (or fails as FailSessions said).
func (c *AgentConn) NewSession(ctx context.Context, dir string) (chat.AgentSessionState, error) {
	if err := c.alive(); err != nil {
		return chat.AgentSessionState{}, err
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	if err := c.r.sessionErr[c.agent.ID]; err != nil {
		return chat.AgentSessionState{}, err
	}
	id := c.r.newSessionID()
	s := &fakeSession{agent: c.agent.ID, dir: dir, model: "fast", mode: "ask"}
	c.r.sessions[id] = s
	return s.state(id), nil
}

// LoadSession replays the session's history through the sink.
func (c *AgentConn) LoadSession(ctx context.Context, sid, dir string) (chat.AgentSessionState, error) {
	if err := c.alive(); err != nil {
		return chat.AgentSessionState{}, err
	}
	c.r.mu.Lock()
	c.r.loads++
	gate := c.r.loadGate
	c.r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return chat.AgentSessionState{}, hub.Wrap(hub.Unavailable, ctx.Err(), "the load was abandoned")
		}
	}
	c.r.mu.Lock()
	s := c.r.sessions[sid]
	noLoad := c.r.noLoad
	var history []chat.AgentUpdate
	if s != nil {
		history = append(history, s.history...)
	}
	c.r.mu.Unlock()
	switch {
	case noLoad:
		return chat.AgentSessionState{}, hub.Errorf(hub.Conflict, "the agent cannot load sessions")
	case s == nil || s.agent != c.agent.ID:
		return chat.AgentSessionState{}, hub.Errorf(hub.NotFound, "unknown session")
	}
	for _, u := range history {
		c.emit(sid, u)
	}
	return s.state(sid), nil
}

// ListSessions lists the agent's sessions in dir.
func (c *AgentConn) ListSessions(ctx context.Context, dir string) ([]chat.AgentSessionSummary, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	var out []chat.AgentSessionSummary
	for id, s := range c.r.sessions {
		if s.agent == c.agent.ID && s.dir == dir {
			out = append(out, chat.AgentSessionSummary{SessionID: id})
		}
	}
	return out, nil
}

// Prompt runs a turn: autoplayed, or handed to the test on Turns.
func (c *AgentConn) Prompt(ctx context.Context, sid string, p chat.AgentPrompt) (chat.AgentTurnResult, error) {
	if err := c.alive(); err != nil {
		return chat.AgentTurnResult{}, err
	}
	c.r.mu.Lock()
	s := c.r.sessions[sid]
	auto := c.r.autoplay
	c.r.mu.Unlock()
	if s == nil {
		return chat.AgentTurnResult{}, hub.Errorf(hub.NotFound, "unknown session")
	}
	c.r.mu.Lock() // the user's message is recorded for a replay, not sent now
	s.history = append(s.history, chat.AgentMessageChunk{Role: "user", Text: p.Text})
	c.r.mu.Unlock()
	t := &AgentTurn{Conn: c, SessionID: sid, Prompt: p, ctx: ctx, end: make(chan turnEnd, 1)}
	c.mu.Lock()
	c.turns[sid] = t
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.turns, sid)
		c.mu.Unlock()
		t.mu.Lock()
		asked := t.asked
		t.mu.Unlock()
		for _, id := range asked { // a turn that ends leaves nothing waiting
			if c.settle(id) {
				c.emit(sid, chat.AgentRequestSettled{RequestID: id, Reason: "cancelled"})
			}
		}
	}()
	if auto {
		go play(t)
	} else {
		select {
		case c.r.Turns <- t:
		case <-ctx.Done():
			return chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, ctx.Err(), "the turn was abandoned")
		case <-c.done:
			return chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, c.err, "the agent has exited")
		}
	}
	select {
	case e := <-t.end:
		return e.res, e.err
	case <-ctx.Done():
		return chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, ctx.Err(), "the turn was abandoned")
	case <-c.done:
		return chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, c.err, "the agent has exited")
	}
}

// Cancel settles the session's pending requests and ends its turn as
// cancelled, as a well-behaved agent does.
func (c *AgentConn) Cancel(ctx context.Context, sid string) error {
	if err := c.alive(); err != nil {
		return err
	}
	c.r.mu.Lock()
	deaf := c.r.deaf
	c.r.mu.Unlock()
	if deaf {
		return nil
	}
	c.mu.Lock()
	c.Cancelled = append(c.Cancelled, sid)
	t := c.turns[sid]
	var ids []string
	for id, p := range c.pending {
		if p.sid == sid {
			ids = append(ids, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ids {
		if c.settle(id) {
			c.emit(sid, chat.AgentRequestSettled{RequestID: id, Reason: "cancelled"})
		}
	}
	if t != nil {
		t.End(chat.AgentTurnResult{StopReason: chat.AgentStopCancelled}, nil)
	}
	return nil
}

// answer hands v to the pending request id.
func (c *AgentConn) answer(id string, v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	if !ok {
		return hub.Errorf(hub.NotFound, "no such request is pending")
	}
	delete(c.pending, id)
	p.answer <- v
	return nil
}

// AnswerPermission answers a pending permission request.
func (c *AgentConn) AnswerPermission(requestID, optionID string) error {
	return c.answer(requestID, optionID)
}

// AnswerQuestion answers a pending question.
func (c *AgentConn) AnswerQuestion(requestID string, a chat.AgentAnswer) error {
	return c.answer(requestID, a)
}

// SetModel changes the session's model to one the agent offers.
func (c *AgentConn) SetModel(ctx context.Context, sid, model string) error {
	return c.set(sid, model, func(s *fakeSession) *string { return &s.model }, true)
}

// SetMode changes the session's mode to one the agent offers.
func (c *AgentConn) SetMode(ctx context.Context, sid, mode string) error {
	return c.set(sid, mode, func(s *fakeSession) *string { return &s.mode }, false)
}

func (c *AgentConn) set(sid, v string, field func(*fakeSession) *string, model bool) error {
	if err := c.alive(); err != nil {
		return err
	}
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	s := c.r.sessions[sid]
	if s == nil {
		return hub.Errorf(hub.NotFound, "unknown session")
	}
	for _, ch := range s.state(sid).Models {
		if model && ch.ID == v {
			*field(s) = v
			return nil
		}
	}
	for _, ch := range s.state(sid).Modes {
		if !model && ch.ID == v {
			*field(s) = v
			return nil
		}
	}
	return hub.Errorf(hub.Invalid, "unknown choice %q", v)
}

// Done is closed once the connection ended.
func (c *AgentConn) Done() <-chan struct{} { return c.done }

// Err says why the connection ended; nil after Close.
func (c *AgentConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close ends the connection.
func (c *AgentConn) Close() error {
	c.end(nil)
	return nil
}

// errCrashed is the exit of the crash script.
var errCrashed = errors.New("agent exited with status 3")
