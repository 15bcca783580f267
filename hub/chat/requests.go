package chat

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Requests an agent makes of the user (permission requests and
// questions) are named by the core, never by the agent: each gets an id of
// 128 random bits, unique for the conversation's whole life, across agent
// restarts and restarts of the child. An agent numbers its requests per
// connection ("r1" after every start), so its own id would let a late or
// replayed answer (a stale tab, a retried POST) meant for an earlier
// request approve a later one. The agent's id is kept beside ours and
// used only to answer the connection that asked.

// MaxPendingRequests bounds the requests of one conversation awaiting
// the user: they are never trimmed (bounds.go), so an agent asking
// without end must be refused. A person answers a handful at a time;
// agents ask one per tool call, and run a few in parallel.
const MaxPendingRequests = 32

// source is one started connection of an agent as its sink sees it:
// every update of one Start arrives tagged with the same source, so a
// request is answered on the connection that asked. conn is set once
// Start returns, under Manager.mu.
type source struct {
	agentID string
	conn    AgentConnection
}

// request is a permission request or question awaiting the user.
type request struct {
	item    *Item
	src     *source
	agentID string // the connection's own id of the request
	notice  string // the identity it was announced under; "" when it was not (notices.go)
}

// askKey names a request as its connection does.
type askKey struct {
	src *source
	id  string
}

// newRequestID returns a fresh request id (Manager.token) no item of c
// uses. m.mu held.
func (m *Manager) newRequestID(c *conversation, kind string) string {
	for {
		if id := m.token(); c.byID[kind+":"+id] == nil {
			return id
		}
	}
}

// admitRequest reports whether c may show one more request; past
// MaxPendingRequests the request is refused as one nobody sees, and a
// notice says so once until the requests drain. m.mu held.
func (m *Manager) admitRequest(c *conversation, src *source, u AgentUpdate) bool {
	if len(c.pending) < MaxPendingRequests {
		return true
	}
	m.refuseLocked(src, u)
	if !c.refusedRequests {
		c.refusedRequests = true
		m.notice(c, "warning", "", fmt.Sprintf("The agent asked more than %d questions or permissions at once; "+
			"the rest were refused.", MaxPendingRequests))
	}
	return false
}

// ask records a request of src under a fresh id and shows its item.
// An agent that reuses the id of a request still pending on the same
// connection withdraws the earlier one. m.mu held.
func (m *Manager) ask(c *conversation, src *source, agentRequestID string, it *Item) {
	if earlier, ok := c.asked[askKey{src, agentRequestID}]; ok {
		m.settle(c, earlier, "cancelled")
	}
	id := it.ID[strings.IndexByte(it.ID, ':')+1:]
	r := &request{item: it, src: src, agentID: agentRequestID}
	c.pending[id] = r
	c.asked[askKey{src, agentRequestID}] = id
	m.upsert(c, it)
	r.notice = m.announce(c, noticeKind(it.Kind), id)
	m.activityChangedLocked()
}

// permission makes the item of a permission request. m.mu held.
func (m *Manager) permission(c *conversation, src *source, u AgentPermissionRequest) {
	m.closeText(c)
	it := m.newItem(c, KindPermission, KindPermission+":"+m.newRequestID(c, KindPermission))
	it.ConversationID, it.State = c.id, "pending"
	if u.Tool.ID != "" {
		tool := m.tool(c, u.Tool)
		m.upsert(c, tool)
		it.SourceToolID, it.Title = tool.ID, tool.Title
		for i := range tool.Content {
			if tool.Content[i].Type == "diff" {
				d := tool.Content[i]
				it.Diff = &d
				break
			}
		}
	}
	for _, o := range u.Options {
		it.Choices = append(it.Choices, Choice{ID: o.ID, Label: o.Name, Kind: o.Kind})
	}
	m.ask(c, src, u.RequestID, it)
}

// question makes the item of a question. m.mu held.
func (m *Manager) question(c *conversation, src *source, u AgentQuestionRequest) {
	m.closeText(c)
	it := m.newItem(c, KindQuestion, KindQuestion+":"+m.newRequestID(c, KindQuestion))
	it.ConversationID, it.State, it.Source = c.id, "pending", "elicitation"
	it.Intro, it.Link = u.Message, u.URL
	if len(u.Schema) > 0 && json.Valid(u.Schema) {
		it.Schema = RawJSON(append([]byte(nil), u.Schema...))
	}
	m.ask(c, src, u.RequestID, it)
}

// settledByAgent ends the request src named agentRequestID without an
// answer (the agent withdrew it, or its turn ended). m.mu held.
func (m *Manager) settledByAgent(c *conversation, src *source, agentRequestID string) {
	if id, ok := c.asked[askKey{src, agentRequestID}]; ok {
		m.settle(c, id, "cancelled")
		m.activityChangedLocked()
	}
}

// take removes the pending request id of c and returns it; nil when it
// is not pending. Every way a request stops waiting goes through here, so
// its notice is resolved here. m.mu held.
func (m *Manager) take(c *conversation, id string) *request {
	r := c.pending[id]
	if r != nil {
		delete(c.pending, id)
		delete(c.asked, askKey{r.src, r.agentID})
		if len(c.pending) == 0 {
			c.refusedRequests = false
		}
		m.resolveNotice(r.notice)
	}
	return r
}

// settle ends the pending request id in state (cancelled), telling
// readers. m.mu held.
func (m *Manager) settle(c *conversation, id, state string) {
	r := m.take(c, id)
	if r == nil {
		return
	}
	r.item.State = state
	if !c.closed {
		m.upsert(c, r.item)
	}
}

// settleAll settles every request of c still waiting. m.mu held.
func (m *Manager) settleAll(c *conversation, state string) {
	for id := range c.pending {
		m.settle(c, id, state)
	}
}

// settleFrom settles the requests of c that conn asked: it has ended,
// and nobody can answer them any more. m.mu held.
func (m *Manager) settleFrom(c *conversation, conn AgentConnection) {
	for id, r := range c.pending {
		if r.src.conn == conn {
			m.settle(c, id, "cancelled")
		}
	}
}

// refuseLocked answers a request nobody will see (a session this child
// does not follow, or one whose replay is dropped) on the connection that
// asked: a permission is rejected when it offers a way to, a question
// cancelled. m.mu held.
func (m *Manager) refuseLocked(src *source, u AgentUpdate) {
	conn := src.conn
	if conn == nil {
		return // still starting: no session can have asked yet
	}
	switch u := u.(type) {
	case AgentPermissionRequest:
		for _, o := range u.Options {
			if strings.HasPrefix(o.Kind, "reject") {
				go conn.AnswerPermission(u.RequestID, o.ID)
				return
			}
		}
	case AgentQuestionRequest:
		go conn.AnswerQuestion(u.RequestID, AgentAnswer{Action: "cancel"})
	}
}
