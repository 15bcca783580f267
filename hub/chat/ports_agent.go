package chat

import (
	"context"
	"errors"
	"time"
)

// The coding-agent ports: the runtime of a workspace's agents and the
// store of its conversations, used by the conversation core (hub/chat).

// AgentRuntime runs the coding agents of one workspace session (Claude
// Code, Codex, Gemini CLI, OpenCode, or any command configured as an
// agent). The session child's conversation core (package hub/chat) drives
// it; the Hub itself never does. Methods are safe for concurrent use.
type AgentRuntime interface {
	// Agents lists every agent the runtime knows, in a stable order, and
	// whether each could start now. It never starts one, so it is cheap
	// enough to call on every listing.
	Agents() []AgentDescriptor
	// Start starts the agent with this id for the workspace folder dir and
	// initializes it. Everything the agent reports about any of its
	// sessions goes to sink until the connection ends. An unknown id is
	// NotFound; an agent that is not installed is a Conflict error
	// satisfying errors.Is(err, ErrAgentNotInstalled); one that fails to
	// start or to answer `initialize` within ctx is Unavailable, with a
	// public message that quotes nothing of its output. Nothing is left
	// running after a failure.
	Start(ctx context.Context, agentID, dir string, sink AgentSink) (AgentConnection, error)
}

// ErrAgentNotInstalled marks an agent whose command was not found.
var ErrAgentNotInstalled = errors.New("agent not installed")

// ErrAgentLoginRequired marks an agent that refused a request until it is
// logged in (ACP's -32000 answer). Errors carrying it are Conflict errors
// whose public message names the agent and how to log in.
var ErrAgentLoginRequired = errors.New("agent login required")

// AgentAvailability says whether an agent could start.
type AgentAvailability string

// The availabilities of agents.
const (
	AgentAvailable    AgentAvailability = "available"
	AgentNotInstalled AgentAvailability = "not-installed"
)

// AgentDescriptor describes one agent the runtime knows.
type AgentDescriptor struct {
	ID           string // never contains ':'; names conversations `<id>:<session>`
	Name         string // for people
	Availability AgentAvailability
}

// AgentSink receives what a connection's agent reports, one call at a
// time, in the order the agent sent it. The sink must return promptly and
// never block on I/O: it runs on the goroutine that reads the agent, which
// stops reading (and so stops the agent writing) while it runs.
type AgentSink func(sessionID string, u AgentUpdate)

// AgentConnection is one started agent, which may hold several sessions.
// Every method that talks to the agent honours ctx; once the connection
// has ended they fail with Unavailable errors.
type AgentConnection interface {
	// Info is what the agent said of itself at `initialize`.
	Info() AgentInfo
	// NewSession starts a session in dir. A refusal until the agent is
	// logged in satisfies errors.Is(err, ErrAgentLoginRequired).
	NewSession(ctx context.Context, dir string) (AgentSessionState, error)
	// LoadSession reopens an earlier session in dir. The agent replays the
	// session's history through the sink before LoadSession returns.
	// Conflict when Info().LoadSession is false; NotFound when the agent no
	// longer knows the session.
	LoadSession(ctx context.Context, sessionID, dir string) (AgentSessionState, error)
	// ListSessions lists the agent's sessions in dir (Conflict when
	// Info().ListSessions is false).
	ListSessions(ctx context.Context, dir string) ([]AgentSessionSummary, error)
	// Prompt runs one turn and returns once it ends, after every update the
	// agent sent during it reached the sink. Errors are the turn's failure:
	// ErrAgentLoginRequired, the connection ending (Unavailable), or the
	// agent's refusal of the request.
	Prompt(ctx context.Context, sessionID string, p AgentPrompt) (AgentTurnResult, error)
	// Cancel asks the agent to end the session's turn; the turn's Prompt
	// then returns with AgentStopCancelled. Requests of the turn still
	// waiting for an answer are settled as cancelled (AgentRequestSettled).
	Cancel(ctx context.Context, sessionID string) error
	// AnswerPermission answers a pending AgentPermissionRequest with one
	// of its options. NotFound when no such request is pending any more.
	AnswerPermission(requestID, optionID string) error
	// AnswerQuestion answers a pending AgentQuestionRequest. NotFound when
	// no such request is pending any more.
	AnswerQuestion(requestID string, a AgentAnswer) error
	// SetModel and SetMode change the session's configuration to a model
	// or mode the agent offered (AgentSessionState); an unknown one is
	// Invalid.
	SetModel(ctx context.Context, sessionID, modelID string) error
	SetMode(ctx context.Context, sessionID, modeID string) error
	// Done is closed once the connection has ended: Close, the agent's
	// exit, or a broken stream. Err then says why (nil after Close).
	Done() <-chan struct{}
	Err() error
	// Close ends the agent and everything it started, and returns once
	// they are gone. Pending requests are settled; calls in flight fail.
	Close() error
}

// ConversationStore keeps a workspace's conversation inventory across
// restarts of its session child, in a place private to the workspace.
// Methods are safe for concurrent use.
type ConversationStore interface {
	// LoadConversations returns what SaveConversations last stored, held
	// images with their bytes; none when nothing was stored yet. A held
	// message whose image cannot be read back is left out (logged where
	// the store can), never returned without it.
	LoadConversations() ([]ConversationRecord, error)
	// SaveConversations replaces the stored inventory with records,
	// atomically and durably, held images included: after a crash either
	// the old or the new inventory is read back whole. Images no record
	// holds any more are forgotten.
	SaveConversations(records []ConversationRecord) error
}

// ConversationRecord is what survives of a conversation: its identity,
// title, times and configuration, the agent session that holds its
// history, and what the user sent that the agent has not had yet. Items
// are not kept: the agent replays them (LoadSession).
type ConversationRecord struct {
	ID        string    `json:"id"`
	AgentID   string    `json:"agentId"`
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Model     string    `json:"model,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	// Held are the messages held behind a running turn, in order: a
	// restarted child delivers them.
	Held []HeldMessageRecord `json:"held,omitempty"`
	// Delivering is the message whose turn ran when the record was saved
	// (recorded before it was sent, without its images): after a crash
	// the child says that turn was interrupted, and never sends it again.
	Delivering *HeldMessageRecord `json:"delivering,omitempty"`
	// Sent maps the request ids of the latest sends to their messages, so
	// a send retried across a restart is answered, not delivered twice.
	Sent []SentRecord `json:"sent,omitempty"`
}

// HeldMessageRecord is a message a user sent that waits for the agent.
type HeldMessageRecord struct {
	ID        string      `json:"id"`
	Text      string      `json:"text"`
	QueuedAt  time.Time   `json:"queuedAt"`
	RequestID string      `json:"requestId,omitempty"`
	Images    []HeldImage `json:"images,omitempty"`
}

// HeldImage is an image of a held message. Key names its bytes: 32
// lower-case hex digits, unique, and the same in every save that holds
// the image, so a store may keep the bytes once per key, apart from the
// records (Data is not part of the records' JSON).
type HeldImage struct {
	Key      string `json:"key"`
	MimeType string `json:"mimeType"`
	Name     string `json:"name,omitempty"`
	Data     []byte `json:"-"`
}

// SentRecord is what a send with a request id answered.
type SentRecord struct {
	RequestID string `json:"requestId"`
	MessageID string `json:"messageId"`
	Held      bool   `json:"held"`
}
