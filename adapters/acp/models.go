package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// Gemini CLI (0.61.0) offers its models the way ACP did before session
// config options: a `models` object in the results of session/new and
// session/load, and a `session/set_model` request to change it. SDK
// v0.13.5 dropped both, and would lose the list. So the wire keeps them:
// the SDK's session/new and session/load requests are noted as the SDK
// writes them (sdkWriter), the `models` of their results is read as the
// result comes back and before the SDK sees it (noteResult), and
// session/set_model is a request the wire sends itself (call). An agent
// that offers a model config option is set through that instead.

// legacyModels is a session's `models` object.
type legacyModels struct {
	Available []struct {
		ModelID string `json:"modelId"`
		Name    string `json:"name"`
	} `json:"availableModels"`
	Current string `json:"currentModelId"`
}

// sdkWriter is the SDK's way to the agent: it notes the requests whose
// results may carry models, then writes the line.
type sdkWriter struct{ c *conn }

func (w sdkWriter) Write(p []byte) (int, error) {
	// The SDK writes one whole message per Write; only two methods
	// matter, so most lines (prompts with images) are never decoded.
	if bytes.Contains(p, []byte(`"session/new"`)) || bytes.Contains(p, []byte(`"session/load"`)) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal(p, &m) == nil && len(m.ID) > 0 && (m.Method == "session/new" || m.Method == "session/load") {
			w.c.mu.Lock()
			w.c.awaiting[string(m.ID)] = m.Params.SessionID
			w.c.mu.Unlock()
		}
	}
	return w.c.out.Write(p)
}

// noteResult looks at a response before the SDK does: a result of a
// noted session/new or session/load leaves its models for state; the
// answer to the wire's own request goes to its caller, and true says the
// SDK must not see it.
func (c *conn) noteResult(id, result json.RawMessage, e *rpcError) (own bool) {
	key := string(id)
	c.mu.Lock()
	sid, noted := c.awaiting[key]
	delete(c.awaiting, key)
	call, own := c.calls[key]
	delete(c.calls, key)
	c.mu.Unlock()
	if own {
		call <- e
		return true
	}
	if !noted || len(result) == 0 {
		return false
	}
	var r struct {
		SessionID string        `json:"sessionId"`
		Models    *legacyModels `json:"models"`
	}
	if json.Unmarshal(result, &r) != nil || r.Models == nil {
		return false
	}
	if sid == "" {
		sid = r.SessionID
	}
	c.mu.Lock()
	c.models[sid] = r.Models
	c.mu.Unlock()
	return false
}

// applyLegacyModels fills the models of a session that has no model
// option from what its session/new or session/load result said; true
// when it did, so SetModel uses session/set_model.
func (c *conn) applyLegacyModels(st *chat.AgentSessionState) bool {
	c.mu.Lock()
	m := c.models[st.SessionID]
	delete(c.models, st.SessionID)
	c.mu.Unlock()
	if m == nil || len(st.Models) > 0 {
		return false
	}
	for _, a := range m.Available {
		name := a.Name
		if name == "" {
			name = a.ModelID
		}
		st.Models = append(st.Models, chat.AgentChoice{ID: a.ModelID, Name: name})
	}
	st.Model = m.Current
	return len(st.Models) > 0
}

// call sends a request of the wire's own (an id the SDK never uses: a
// string) and waits for its answer, the agent's end, or ctx.
func (c *conn) call(ctx context.Context, method string, params any) error {
	answer := make(chan *rpcError, 1)
	c.mu.Lock()
	c.nextCall++
	id := json.RawMessage(fmt.Sprintf(`"wharf-%d"`, c.nextCall))
	c.calls[string(id)] = answer
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.calls, string(id))
		c.mu.Unlock()
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params"`
	}{"2.0", id, method, params})
	if err == nil {
		_, err = c.out.Write(append(b, '\n'))
	}
	if err != nil {
		forget()
		return c.failure(err, "could not send "+method)
	}
	select {
	case e := <-answer:
		if e != nil {
			return c.failure(&acpsdk.RequestError{Code: e.Code, Message: e.Message}, method+" failed")
		}
		return nil
	case <-c.done:
		forget()
		return c.failure(c.Err(), method+" failed")
	case <-ctx.Done():
		forget()
		return hub.Wrap(hub.Unavailable, ctx.Err(), c.agent.Name+" did not answer "+method+" in time")
	}
}
