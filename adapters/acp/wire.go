package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Bounds of the agent's lines.
const (
	// MaxLine is the longest line read from an agent (a session replay
	// carrying images); a longer one is skipped whole.
	MaxLine = 64 << 20
	// sdkMaxLine is the longest line handed to the SDK, whose reader dies
	// on a line of 10 MiB.
	sdkMaxLine = 10<<20 - 4096
)

// envelope is the part of a JSON-RPC message the wire needs.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// read reads the agent's stdout line by line until it ends, handling
// what the SDK must not see (updates, permission requests, questions,
// over-long lines, garbage) and passing the rest to the SDK through sdk.
// The agent waits while a line is handled: nothing is queued, nothing
// dropped.
func (c *conn) read(stdout io.Reader, sdk *io.PipeWriter) {
	defer c.procs.Done()
	defer sdk.Close()
	br := bufio.NewReaderSize(stdout, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping && len(chunk) > 0 {
			if len(line)+len(chunk) > MaxLine {
				skipping, line = true, nil
				c.complain("the agent wrote a line longer than 64 MiB; it was skipped")
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !skipping && len(line) > 0 && !c.dispatch(line, sdk) {
			return
		}
		skipping, line = false, nil
		if err != nil {
			return
		}
	}
}

// dispatch handles one line; false once the SDK's side is gone.
func (c *conn) dispatch(line []byte, sdk *io.PipeWriter) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return true
	}
	var env envelope
	if line[0] != '{' || json.Unmarshal(line, &env) != nil {
		c.complain("the agent wrote output that is not ACP; it was skipped")
		return true
	}
	request := len(env.ID) > 0 && !bytes.Equal(env.ID, []byte("null"))
	switch {
	case env.Method == "session/update" && !request:
		c.update(env.Params)
		return true
	case env.Method == "session/request_permission" && request:
		c.permission(env.ID, env.Params)
		return true
	case env.Method == "elicitation/create" && request:
		c.elicitation(env.ID, env.Params)
		return true
	case env.Method == "$/cancel_request" && !request && c.withdraw(env.Params):
		return true
	case env.Method != "" && !request && env.Method != "$/cancel_request":
		// Other notifications are extensions the SDK would only queue.
		c.log.Debug("agent notification ignored", "method", truncate(env.Method, 64))
		return true
	case env.Method == "" && request && c.noteResult(env.ID, env.Result, env.Error):
		return true // an answer to the wire's own request
	case len(line) > sdkMaxLine && env.Method != "":
		c.reply(env.ID, nil, &rpcError{Code: -32600, Message: "request too large"})
		return true
	case len(line) > sdkMaxLine:
		// A response the SDK's reader cannot take: its caller gets an error.
		line, _ = json.Marshal(message{JSONRPC: "2.0", ID: env.ID, Error: &rpcError{Code: -32603, Message: "response too large"}})
	}
	if _, err := sdk.Write(append(line, '\n')); err != nil {
		return false
	}
	return true
}

// message is a JSON-RPC message the wire writes itself.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply answers the agent's request id with result or e.
func (c *conn) reply(id json.RawMessage, result any, e *rpcError) {
	b, err := json.Marshal(message{JSONRPC: "2.0", ID: id, Result: result, Error: e})
	if err != nil {
		c.log.Error("answer does not encode", "err", err)
		return
	}
	if _, err := c.out.Write(append(b, '\n')); err != nil {
		c.log.Debug("answer not written: the agent is gone", "err", err)
	}
}

// complain tells every session with a turn in flight about a problem of
// the agent's stream, once per turn.
func (c *conn) complain(msg string) {
	c.mu.Lock()
	var sids []string
	for sid, t := range c.turns {
		if !t.complained {
			t.complained = true
			sids = append(sids, sid)
		}
	}
	c.mu.Unlock()
	c.log.Warn("agent stream problem", "problem", msg)
	for _, sid := range sids {
		c.emit(sid, noticeUpdate("warning", "", msg))
	}
}

// truncate cuts s to at most n bytes, for logs.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
