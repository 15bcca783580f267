package chat

// Item kinds (the contract's ConversationItem kinds this core produces).
const (
	KindUserMessage      = "user_message"
	KindAssistantMessage = "assistant_message"
	KindReasoning        = "reasoning"
	KindTool             = "tool"
	KindCommand          = "command"
	KindPermission       = "permission"
	KindQuestion         = "question"
	KindNotice           = "notice"
	KindContextWindow    = "context_window"
	KindCompaction       = "compaction"
	KindTaskProgress     = "task_progress"
)

// Item is one conversation item as the wire carries it (ConversationItem,
// an open record): `id` and `kind` always, then the fields of its kind.
// Times are epoch milliseconds. Layouts, by kind:
//
//	user_message       text, attachments [{mimeType, size}]
//	assistant_message  markdown (grown by item.text_delta), messageId,
//	                   agent, usage (TokenUsage) on the turn's usage
//	                   carrier `usage:<turn>` whose markdown is empty
//	reasoning          markdown (grown by item.text_delta)
//	tool, command      title, toolKind, status (pending, in_progress,
//	                   completed, failed), content [{type: text, text} |
//	                   {type: diff, path, oldText?, newText} | {type:
//	                   terminal, terminalId}], locations, input (the
//	                   agent's raw input), command (command items), startedAt,
//	                   completedAt, elapsedMs; id `tool:<call id>`
//	permission         id `permission:<request id>`, the core's (see
//	                   requests.go); conversationId, sourceToolId, title, diff, choices
//	                   [{id, label, kind}], state (pending, answered,
//	                   cancelled), choiceId once answered
//	question           conversationId, source "elicitation", intro, schema,
//	                   link, state (pending, answered, cancelled), action
//	notice             level (info, warning, error), message, code
//	context_window     used, size, costUsd (one per conversation)
//	compaction         status (in_progress, completed, failed, cancelled),
//	                   summary
//	task_progress      entries [{content, priority, status}] (the plan, one
//	                   per conversation, restated whole)
type Item struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	CreatedAt int64  `json:"createdAt"`

	Text        string           `json:"text,omitempty"`
	Attachments []AttachmentInfo `json:"attachments,omitempty"`

	Markdown  *string     `json:"markdown,omitempty"`
	MessageID string      `json:"messageId,omitempty"`
	Agent     string      `json:"agent,omitempty"`
	Usage     *TokenUsage `json:"usage,omitempty"`

	Title       string        `json:"title,omitempty"`
	ToolKind    string        `json:"toolKind,omitempty"`
	Status      string        `json:"status,omitempty"`
	Content     []ToolContent `json:"content,omitempty"`
	Locations   []string      `json:"locations,omitempty"`
	Input       RawJSON       `json:"input,omitempty"`
	Command     string        `json:"command,omitempty"`
	StartedAt   int64         `json:"startedAt,omitempty"`
	CompletedAt int64         `json:"completedAt,omitempty"`
	ElapsedMs   *int64        `json:"elapsedMs,omitempty"`

	ConversationID string       `json:"conversationId,omitempty"`
	SourceToolID   string       `json:"sourceToolId,omitempty"`
	Diff           *ToolContent `json:"diff,omitempty"`
	Choices        []Choice     `json:"choices,omitempty"`
	ChoiceID       string       `json:"choiceId,omitempty"`
	State          string       `json:"state,omitempty"`
	Source         string       `json:"source,omitempty"`
	Intro          string       `json:"intro,omitempty"`
	Schema         RawJSON      `json:"schema,omitempty"`
	Link           string       `json:"link,omitempty"`
	Action         string       `json:"action,omitempty"`
	Level          string       `json:"level,omitempty"`
	Message        string       `json:"message,omitempty"`
	Code           string       `json:"code,omitempty"`
	Used           *int64       `json:"used,omitempty"`
	Size           *int64       `json:"size,omitempty"`
	CostUSD        *float64     `json:"costUsd,omitempty"`
	Summary        string       `json:"summary,omitempty"`
	Entries        []PlanEntry  `json:"entries,omitempty"`
	Label          string       `json:"label,omitempty"`
	// Trimmed marks an item whose content was dropped to keep its
	// conversation within MaxConversationBytes (bounds.go).
	Trimmed bool `json:"trimmed,omitempty"`

	counted   int   // the size counted in the conversation's bytes
	cutNotice *Item // the notice saying this item was cut, if it was
}

// RawJSON is JSON kept as it came; empty marshals as absent (omitempty).
type RawJSON []byte

// MarshalJSON writes the JSON as it is.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// AttachmentInfo describes an attachment without its bytes.
type AttachmentInfo struct {
	MimeType string `json:"mimeType"`
	Size     int    `json:"size"`
	Name     string `json:"name,omitempty"`
}

// TokenUsage is the contract's TokenUsage: every component optional
// (absent is unknown, not zero).
type TokenUsage struct {
	Input      *int64   `json:"input,omitempty"`
	Output     *int64   `json:"output,omitempty"`
	CacheRead  *int64   `json:"cacheRead,omitempty"`
	CacheWrite *int64   `json:"cacheWrite,omitempty"`
	Reasoning  *int64   `json:"reasoning,omitempty"`
	CostUSD    *float64 `json:"costUsd,omitempty"`
}

// ToolContent is one piece of a tool call's output.
type ToolContent struct {
	Type       string  `json:"type"`
	Text       string  `json:"text,omitempty"`
	Path       string  `json:"path,omitempty"`
	OldText    *string `json:"oldText,omitempty"`
	NewText    *string `json:"newText,omitempty"`
	TerminalID string  `json:"terminalId,omitempty"`
}

// Choice is one answer of a permission request.
type Choice struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Kind  string `json:"kind,omitempty"`
}

// PlanEntry is one step of a task_progress item.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority,omitempty"`
	Status   string `json:"status,omitempty"`
}
