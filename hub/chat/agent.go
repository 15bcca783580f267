package chat

import (
	"time"
)

// The values the AgentRuntime and AgentConnection ports (ports_agent.go) carry:
// what an agent says of itself and its sessions, a prompt and a turn's
// result, and the updates an agent reports through its AgentSink.

// AgentInfo is what an agent said of itself at `initialize`.
type AgentInfo struct {
	Name, Version string
	LoadSession   bool // LoadSession works
	ListSessions  bool // ListSessions works
	Images        bool // prompts may carry images
}

// AgentSessionState is a session's identity and configuration.
type AgentSessionState struct {
	SessionID string
	Models    []AgentChoice // what SetModel takes; empty when the agent offers no choice
	Model     string        // the current model, "" when unknown
	Modes     []AgentChoice // what SetMode takes
	Mode      string
}

// AgentSessionSummary is one session ListSessions found.
type AgentSessionSummary struct {
	SessionID string
	Title     string
	UpdatedAt time.Time // zero when the agent did not say
}

// AgentPrompt is what the user sends in one turn.
type AgentPrompt struct {
	Text   string
	Images []AgentImage
}

// AgentImage is an image of a prompt, already checked by the core.
type AgentImage struct {
	MimeType string
	Data     []byte
}

// AgentStopReason is why a turn ended, as ACP names it.
type AgentStopReason string

// The stop reasons of ACP.
const (
	AgentStopEndTurn         AgentStopReason = "end_turn"
	AgentStopMaxTokens       AgentStopReason = "max_tokens"
	AgentStopMaxTurnRequests AgentStopReason = "max_turn_requests"
	AgentStopRefusal         AgentStopReason = "refusal"
	AgentStopCancelled       AgentStopReason = "cancelled"
)

// AgentTurnResult is how a turn ended.
type AgentTurnResult struct {
	StopReason AgentStopReason
	Usage      *AgentTokenUsage // nil when the agent did not say
}

// AgentTokenUsage counts a turn's tokens; a nil component is unknown, not
// zero.
type AgentTokenUsage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning *int64
	CostUSD                                         *float64
}

// AgentAnswer answers a question: Action "accept" with Content (the
// fields the question's schema asked for), "decline" or "cancel".
type AgentAnswer struct {
	Action  string
	Content map[string]any
}

// AgentUpdate is one thing an agent reports about a session: one of the
// Agent* types below whose method is agentUpdate.
type AgentUpdate interface{ agentUpdate() }

// AgentMessageChunk is a piece of the agent's answer (Role "assistant"),
// its reasoning ("reasoning"), or, while a session loads, the user's
// earlier message ("user").
type AgentMessageChunk struct {
	Role      string
	MessageID string // the provider's id of the message, "" when not given
	Text      string
	Images    []AgentImage // user messages replayed with their images
}

// AgentToolCall creates (New) or updates a tool call. On an update a nil
// field is unchanged.
type AgentToolCall struct {
	ID        string
	New       bool
	Title     *string
	Kind      *string // read, edit, delete, move, search, execute, think, fetch, other
	Status    *string // pending, in_progress, completed, failed
	Content   []AgentToolContent
	Locations []string
	RawInput  []byte // JSON; the command of an execute call, shown to people
}

// AgentToolContent is one piece of a tool call's output: Text, a Diff of
// Path (OldText nil for a new file), or a Terminal's output.
type AgentToolContent struct {
	Type       string // "text", "diff" or "terminal"
	Text       string
	Path       string
	OldText    *string
	NewText    string
	TerminalID string
}

// AgentPlan restates the agent's whole plan.
type AgentPlan struct {
	Entries []AgentPlanEntry
}

// AgentPlanEntry is one step of a plan.
type AgentPlanEntry struct {
	Content, Priority, Status string // status: pending, in_progress, completed
}

// AgentContextUsage is how full the session's context window is.
type AgentContextUsage struct {
	Used, Size int64
	CostUSD    *float64
}

// AgentCompaction reports the agent compacting its context: Status
// in_progress, completed, failed or cancelled; Summary what it kept.
type AgentCompaction struct {
	ID, Status, Summary string
}

// AgentNotice is something the agent tells the user outside the answer:
// Level "info", "warning" or "error"; Code one of the contract's notice
// codes when it applies.
type AgentNotice struct {
	Level, Code, Message string
}

// AgentSessionInfo updates the session's configuration or title; a nil
// field is unchanged.
type AgentSessionInfo struct {
	Title  *string
	Model  *string
	Mode   *string
	Models []AgentChoice // nil: unchanged
	Modes  []AgentChoice
}

// AgentPermissionRequest asks the user to allow a tool call. It waits for
// AnswerPermission, or AgentRequestSettled.
type AgentPermissionRequest struct {
	RequestID string
	Tool      AgentToolCall
	Options   []AgentPermissionOption
}

// AgentPermissionOption is one answer to a permission request: Kind
// allow_once, allow_always, reject_once or reject_always.
type AgentPermissionOption struct {
	ID, Name, Kind string
}

// AgentQuestionRequest asks the user a question (an ACP elicitation): a
// form described by Schema (JSON Schema, JSON), or a URL to open. It waits
// for AnswerQuestion, or AgentRequestSettled.
type AgentQuestionRequest struct {
	RequestID string
	Message   string
	Schema    []byte
	URL       string
}

// AgentRequestSettled ends a pending request without an answer from the
// user: the agent withdrew it or the turn was cancelled.
type AgentRequestSettled struct {
	RequestID string
	Reason    string // "cancelled" or "withdrawn"
}

func (AgentMessageChunk) agentUpdate()      {}
func (AgentToolCall) agentUpdate()          {}
func (AgentPlan) agentUpdate()              {}
func (AgentContextUsage) agentUpdate()      {}
func (AgentCompaction) agentUpdate()        {}
func (AgentNotice) agentUpdate()            {}
func (AgentSessionInfo) agentUpdate()       {}
func (AgentPermissionRequest) agentUpdate() {}
func (AgentQuestionRequest) agentUpdate()   {}
func (AgentRequestSettled) agentUpdate()    {}
