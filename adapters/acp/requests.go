package acp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"sync"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// request is an agent's request awaiting the user: a permission or a
// question. It is answered once, by the user, the agent's withdrawal, a
// cancel or the end of the connection.
type request struct {
	c        *conn
	sid      string
	rpcID    json.RawMessage
	question bool
	options  []string // a permission's option ids
	once     sync.Once
}

// settle answers the agent: answer is the option id (permission) or the
// chat.AgentAnswer (question); nil answers "cancelled".
func (rq *request) settle(answer any) {
	rq.once.Do(func() {
		if rq.question {
			a, ok := answer.(chat.AgentAnswer)
			if !ok {
				a = chat.AgentAnswer{Action: "cancel"}
			}
			result := map[string]any{"action": a.Action}
			if a.Action == "accept" {
				result["content"] = a.Content
			}
			rq.c.reply(rq.rpcID, result, nil)
			return
		}
		outcome := map[string]any{"outcome": "cancelled"}
		if id, ok := answer.(string); ok {
			outcome = map[string]any{"outcome": "selected", "optionId": id}
		}
		rq.c.reply(rq.rpcID, map[string]any{"outcome": outcome}, nil)
	})
}

// hold registers rq and returns the id the core knows it by.
func (c *conn) hold(rq *request) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		return "", false
	default:
	}
	c.nextReq++
	id := "r" + strconv.Itoa(c.nextReq)
	c.pending[id] = rq
	return id, true
}

// permission handles session/request_permission: the sink sees it in
// order with the updates, and the agent waits for AnswerPermission.
func (c *conn) permission(rpcID, params json.RawMessage) {
	var p struct {
		SessionID string          `json:"sessionId"`
		ToolCall  json.RawMessage `json:"toolCall"`
		Options   []struct {
			OptionID string `json:"optionId"`
			Name     string `json:"name"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	var tool rawUpdate
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" || len(p.Options) == 0 {
		c.reply(rpcID, nil, &rpcError{Code: -32602, Message: "invalid permission request"})
		return
	}
	_ = json.Unmarshal(p.ToolCall, &tool)
	tool.Kind = "tool_call_update"
	rq := &request{c: c, sid: p.SessionID, rpcID: rpcID}
	out := chat.AgentPermissionRequest{Tool: toolCall(tool)}
	for _, o := range p.Options {
		rq.options = append(rq.options, o.OptionID)
		out.Options = append(out.Options, chat.AgentPermissionOption{ID: o.OptionID, Name: o.Name, Kind: o.Kind})
	}
	id, ok := c.hold(rq)
	if !ok {
		rq.settle(nil)
		return
	}
	out.RequestID = id
	c.emit(p.SessionID, out)
}

// elicitation handles elicitation/create: a form (or a URL) for the
// user; a request tied to no session is declined.
func (c *conn) elicitation(rpcID, params json.RawMessage) {
	var p struct {
		SessionID string          `json:"sessionId"`
		Mode      string          `json:"mode"`
		Message   string          `json:"message"`
		Schema    json.RawMessage `json:"requestedSchema"`
		URL       string          `json:"url"`
	}
	rq := &request{c: c, rpcID: rpcID, question: true}
	if json.Unmarshal(params, &p) != nil {
		rq.settle(chat.AgentAnswer{Action: "decline"})
		return
	}
	if p.SessionID == "" {
		// Agents built on the Go SDK lose the session scope of a form (its
		// type has no field for it): the one turn in flight is meant.
		c.mu.Lock()
		for sid := range c.turns {
			if len(c.turns) == 1 {
				p.SessionID = sid
			}
		}
		c.mu.Unlock()
	}
	if p.SessionID == "" {
		rq.settle(chat.AgentAnswer{Action: "decline"})
		return
	}
	rq.sid = p.SessionID
	id, ok := c.hold(rq)
	if !ok {
		rq.settle(nil)
		return
	}
	c.emit(p.SessionID, chat.AgentQuestionRequest{RequestID: id, Message: p.Message, Schema: p.Schema, URL: p.URL})
}

// withdraw handles the agent's $/cancel_request of a request awaiting the
// user; false when it names none (the SDK then takes it).
func (c *conn) withdraw(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	c.mu.Lock()
	var id string
	var rq *request
	for k, v := range c.pending {
		if bytes.Equal(bytes.TrimSpace(v.rpcID), bytes.TrimSpace(p.RequestID)) {
			id, rq = k, v
			delete(c.pending, k)
			break
		}
	}
	c.mu.Unlock()
	if rq == nil {
		return false
	}
	rq.once.Do(func() { c.reply(rq.rpcID, nil, &rpcError{Code: -32800, Message: "request cancelled"}) })
	c.emit(rq.sid, chat.AgentRequestSettled{RequestID: id, Reason: "withdrawn"})
	return true
}

// take removes the pending request id of the given sort.
func (c *conn) take(id string, question bool) (*request, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rq := c.pending[id]
	if rq == nil || rq.question != question {
		return nil, hub.Errorf(hub.NotFound, "no such request is pending")
	}
	delete(c.pending, id)
	return rq, nil
}

// AnswerPermission answers a pending permission request.
func (c *conn) AnswerPermission(id, optionID string) error {
	c.mu.Lock()
	rq := c.pending[id]
	c.mu.Unlock()
	if rq != nil && !rq.question && !slices.Contains(rq.options, optionID) {
		return hub.Errorf(hub.Invalid, "the request has no option %q", optionID)
	}
	rq, err := c.take(id, false)
	if err != nil {
		return err
	}
	rq.settle(optionID)
	return nil
}

// AnswerQuestion answers a pending question.
func (c *conn) AnswerQuestion(id string, a chat.AgentAnswer) error {
	rq, err := c.take(id, true)
	if err != nil {
		return err
	}
	rq.settle(a)
	return nil
}

// settleSession answers every request of session sid as cancelled.
func (c *conn) settleSession(sid string) {
	c.mu.Lock()
	var ids []string
	var rqs []*request
	for id, rq := range c.pending {
		if rq.sid == sid {
			ids, rqs = append(ids, id), append(rqs, rq)
			delete(c.pending, id)
		}
	}
	c.mu.Unlock()
	for i, rq := range rqs {
		rq.settle(nil)
		c.emit(sid, chat.AgentRequestSettled{RequestID: ids[i], Reason: "cancelled"})
	}
}
