package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

var _ chat.AgentConnection = (*conn)(nil)

// conn is one running agent: a chat.AgentConnection.
type conn struct {
	r       *Runtime
	agent   Agent
	dir     string
	sink    chat.AgentSink
	log     *slog.Logger
	cmd     *exec.Cmd
	out     *lockedWriter
	sdk     *acpsdk.ClientSideConnection
	info    chat.AgentInfo
	terms   *terminals
	procs   sync.WaitGroup // the goroutines that read and reap the agent
	drained chan struct{}  // closed once the agent's stdout is read out

	sinkMu sync.Mutex // one sink call at a time

	mu       sync.Mutex
	sessions map[string]*sessionOptions // what each session offers, to set it
	pending  map[string]*request        // requests awaiting the user, by the id given to the core
	turns    map[string]*promptTurn     // sessions with a Prompt in flight
	nextReq  int
	awaiting map[string]string         // SDK requests whose results may carry models: id → session (models.go)
	models   map[string]*legacyModels  // models from those results, until state takes them
	calls    map[string]chan *rpcError // the wire's own requests awaiting their answer
	nextCall int
	closing  bool
	done     chan struct{}
	err      error
}

// sessionOptions are the config option ids of a session's model and mode.
type sessionOptions struct {
	modelOption, modeOption string // "" when the agent offers none (modes: session/set_mode)
	legacyModel             bool   // models came as a `models` object: session/set_model (models.go)
}

// promptTurn is a Prompt in flight.
type promptTurn struct {
	complained bool
}

func newConn(r *Runtime, a Agent, dir string, sink chat.AgentSink, cmd *exec.Cmd, stdin interface {
	Write([]byte) (int, error)
	Close() error
}) *conn {
	c := &conn{r: r, agent: a, dir: dir, sink: sink, cmd: cmd, out: &lockedWriter{w: stdin},
		log:      r.log.With("agent", a.ID, "pid", cmd.Process.Pid),
		sessions: map[string]*sessionOptions{}, pending: map[string]*request{}, turns: map[string]*promptTurn{},
		awaiting: map[string]string{}, models: map[string]*legacyModels{}, calls: map[string]chan *rpcError{},
		done: make(chan struct{})}
	c.terms = newTerminals(c)
	return c
}

// emit hands an update to the sink, one at a time.
func (c *conn) emit(sid string, u chat.AgentUpdate) {
	c.sinkMu.Lock()
	defer c.sinkMu.Unlock()
	c.sink(sid, u)
}

// end records why the connection ended and settles what waits. The
// agent's terminals die with it, and their ends reach the sink before
// Done is closed.
func (c *conn) end(err error) {
	c.terms.closeAll()
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return
	default:
	}
	c.err = err
	close(c.done)
	pending := c.takePendingLocked()
	c.mu.Unlock()
	c.cancelRequests(pending)
}

// takePendingLocked empties the requests awaiting the user. c.mu held.
func (c *conn) takePendingLocked() map[string]*request {
	pending := c.pending
	c.pending = map[string]*request{}
	return pending
}

// cancelRequests settles pending as cancelled, telling the sink.
func (c *conn) cancelRequests(pending map[string]*request) {
	for id, rq := range pending {
		rq.settle(nil)
		c.emit(rq.sid, chat.AgentRequestSettled{RequestID: id, Reason: "cancelled"})
	}
}

// Info is what the agent said at initialize.
func (c *conn) Info() chat.AgentInfo { return c.info }

// Done is closed once the agent is gone.
func (c *conn) Done() <-chan struct{} { return c.done }

// Err says why the agent is gone; nil after Close.
func (c *conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// failure maps an error of a request to the agent onto the port's
// errors: -32000 is a login the agent needs; a dead connection is
// Unavailable; the agent's own refusals keep their code, never their text.
func (c *conn) failure(err error, what string) error {
	if c.exited() {
		return hub.Wrap(hub.Unavailable, c.Err(), c.agent.Name+" has exited")
	}
	var re *acpsdk.RequestError
	if errors.As(err, &re) {
		switch re.Code {
		case -32000:
			return hub.Wrap(hub.Conflict, chat.ErrAgentLoginRequired,
				c.agent.Name+" needs a login on the Hub's machine (see the agent accounts)")
		case -32601:
			return hub.Wrap(hub.Conflict, err, c.agent.Name+" does not support this")
		case -32602:
			return hub.Wrap(hub.Invalid, err, c.agent.Name+" refused the request as invalid")
		}
		return hub.Wrap(hub.Unavailable, err, fmt.Sprintf("%s: %s (error %d)", c.agent.Name, what, re.Code))
	}
	return hub.Wrap(hub.Unavailable, err, c.agent.Name+": "+what)
}

// exited reports whether the agent is gone. An agent that dies fails
// the requests in flight the moment its stdout closes (the SDK's "peer
// disconnected", -32603), a little before the reaper has ended the
// connection: once the SDK has seen the pipe close, the end is waited for
// (the reaper's own bound, killGrace, plus as much again), so the failure
// says the agent exited rather than quoting that error.
func (c *conn) exited() bool {
	select {
	case <-c.done:
		return true
	case <-c.sdk.Done():
	default:
		return false
	}
	t := time.NewTimer(2 * killGrace)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
		return false
	}
}

// NewSession opens a session in dir.
func (c *conn) NewSession(ctx context.Context, dir string) (chat.AgentSessionState, error) {
	res, err := c.sdk.NewSession(ctx, acpsdk.NewSessionRequest{Cwd: dir, McpServers: []acpsdk.McpServer{}})
	if err != nil {
		return chat.AgentSessionState{}, c.failure(err, "could not open a session")
	}
	return c.state(string(res.SessionId), res.Modes, res.ConfigOptions), nil
}

// LoadSession reopens a session; the agent replays it before answering.
func (c *conn) LoadSession(ctx context.Context, sid, dir string) (chat.AgentSessionState, error) {
	if !c.info.LoadSession {
		return chat.AgentSessionState{}, hub.Errorf(hub.Conflict, "%s cannot reopen sessions", c.agent.Name)
	}
	res, err := c.sdk.LoadSession(ctx, acpsdk.LoadSessionRequest{SessionId: acpsdk.SessionId(sid), Cwd: dir,
		McpServers: []acpsdk.McpServer{}})
	if err != nil {
		var re *acpsdk.RequestError
		if errors.As(err, &re) && re.Code == -32002 { // resource not found
			return chat.AgentSessionState{}, hub.Wrap(hub.NotFound, err, c.agent.Name+" no longer has this session")
		}
		return chat.AgentSessionState{}, c.failure(err, "could not reopen the session")
	}
	return c.state(sid, res.Modes, res.ConfigOptions), nil
}

// ListSessions lists the agent's sessions in dir.
func (c *conn) ListSessions(ctx context.Context, dir string) ([]chat.AgentSessionSummary, error) {
	if !c.info.ListSessions {
		return nil, hub.Errorf(hub.Conflict, "%s cannot list sessions", c.agent.Name)
	}
	var out []chat.AgentSessionSummary
	var cursor *string
	for range 100 { // pages; a bound against an agent that never ends
		res, err := c.sdk.ListSessions(ctx, acpsdk.ListSessionsRequest{Cwd: &dir, Cursor: cursor})
		if err != nil {
			return nil, c.failure(err, "could not list sessions")
		}
		for _, s := range res.Sessions {
			sum := chat.AgentSessionSummary{SessionID: string(s.SessionId)}
			if s.Title != nil {
				sum.Title = *s.Title
			}
			if s.UpdatedAt != nil {
				sum.UpdatedAt = parseTime(*s.UpdatedAt)
			}
			out = append(out, sum)
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// Prompt runs one turn.
func (c *conn) Prompt(ctx context.Context, sid string, p chat.AgentPrompt) (chat.AgentTurnResult, error) {
	blocks := []acpsdk.ContentBlock{}
	if p.Text != "" {
		blocks = append(blocks, acpsdk.ContentBlock{Text: &acpsdk.ContentBlockText{Type: "text", Text: p.Text}})
	}
	for _, img := range p.Images {
		blocks = append(blocks, acpsdk.ContentBlock{Image: &acpsdk.ContentBlockImage{Type: "image",
			MimeType: img.MimeType, Data: base64.StdEncoding.EncodeToString(img.Data)}})
	}
	c.mu.Lock()
	c.turns[sid] = &promptTurn{}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.turns, sid)
		c.mu.Unlock()
		c.settleSession(sid)
	}()
	res, err := c.sdk.Prompt(ctx, acpsdk.PromptRequest{SessionId: acpsdk.SessionId(sid), Prompt: blocks})
	if err != nil {
		if ctx.Err() != nil {
			return chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, ctx.Err(), "the turn was abandoned")
		}
		return chat.AgentTurnResult{}, c.failure(err, "the turn failed")
	}
	out := chat.AgentTurnResult{StopReason: chat.AgentStopReason(res.StopReason)}
	if u := res.Usage; u != nil {
		in, outT := int64(u.InputTokens), int64(u.OutputTokens)
		out.Usage = &chat.AgentTokenUsage{Input: &in, Output: &outT, CacheRead: i64(u.CachedReadTokens),
			CacheWrite: i64(u.CachedWriteTokens), Reasoning: i64(u.ThoughtTokens)}
	}
	return out, nil
}

func i64(p *int) *int64 {
	if p == nil {
		return nil
	}
	v := int64(*p)
	return &v
}

// Cancel sends session/cancel and settles the session's requests as
// cancelled, as ACP asks of a client.
func (c *conn) Cancel(ctx context.Context, sid string) error {
	c.settleSession(sid)
	if err := c.sdk.Cancel(ctx, acpsdk.CancelNotification{SessionId: acpsdk.SessionId(sid)}); err != nil {
		return c.failure(err, "could not cancel")
	}
	return nil
}

// SetModel sets the session's model through its model config option, or
// session/set_model for an agent that offers its models the older way.
func (c *conn) SetModel(ctx context.Context, sid, model string) error {
	c.mu.Lock()
	opts := c.sessions[sid]
	c.mu.Unlock()
	switch {
	case opts != nil && opts.modelOption != "":
		return c.setOption(ctx, sid, opts.modelOption, model)
	case opts != nil && opts.legacyModel:
		return c.call(ctx, "session/set_model", map[string]string{"sessionId": sid, "modelId": model})
	}
	return hub.Errorf(hub.Invalid, "%s offers no model choice", c.agent.Name)
}

// SetMode sets the session's mode: its mode config option, or
// session/set_mode.
func (c *conn) SetMode(ctx context.Context, sid, mode string) error {
	c.mu.Lock()
	opts := c.sessions[sid]
	c.mu.Unlock()
	if opts != nil && opts.modeOption != "" {
		return c.setOption(ctx, sid, opts.modeOption, mode)
	}
	if _, err := c.sdk.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: acpsdk.SessionId(sid),
		ModeId: acpsdk.SessionModeId(mode)}); err != nil {
		return c.failure(err, "could not change the mode")
	}
	return nil
}

func (c *conn) setOption(ctx context.Context, sid, option, value string) error {
	_, err := c.sdk.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
		SessionId: acpsdk.SessionId(sid), ConfigId: acpsdk.SessionConfigId(option), Value: acpsdk.SessionConfigValueId(value)}})
	if err != nil {
		return c.failure(err, "could not change the configuration")
	}
	return nil
}

// state is the port's view of a session's modes and config options, and
// remembers which options set its model and mode.
func (c *conn) state(sid string, modes *acpsdk.SessionModeState, options []acpsdk.SessionConfigOption) chat.AgentSessionState {
	st := chat.AgentSessionState{SessionID: sid}
	opts := &sessionOptions{}
	if modes != nil {
		st.Mode = string(modes.CurrentModeId)
		for _, m := range modes.AvailableModes {
			st.Modes = append(st.Modes, chat.AgentChoice{ID: string(m.Id), Name: m.Name})
		}
	}
	raw, _ := json.Marshal(options)
	var decoded []configOption
	_ = json.Unmarshal(raw, &decoded)
	applyOptions(&st, opts, decoded)
	opts.legacyModel = c.applyLegacyModels(&st)
	c.mu.Lock()
	c.sessions[sid] = opts
	c.mu.Unlock()
	return st
}
