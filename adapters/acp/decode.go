package acp

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub/chat"
)

// The raw shapes of `session/update` decoded here rather than by the SDK,
// which loses the variants it does not know. Every field is optional to
// the decoder; what a variant lacks, it lacks.

type updateParams struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

type rawUpdate struct {
	Kind string `json:"sessionUpdate"`
	// chunks
	Content   json.RawMessage `json:"content"`
	MessageID string          `json:"messageId"`
	// tool calls
	ToolCallID string                  `json:"toolCallId"`
	Title      *string                 `json:"title"`
	ToolKind   *string                 `json:"kind"`
	Status     *string                 `json:"status"`
	Locations  []struct{ Path string } `json:"locations"`
	RawInput   json.RawMessage         `json:"rawInput"`
	// plan
	Entries []chat.AgentPlanEntry `json:"entries"`
	// usage
	Used *int64 `json:"used"`
	Size *int64 `json:"size"`
	Cost *struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	} `json:"cost"`
	// compaction
	CompactionID string `json:"compactionId"`
	Summary      string `json:"summary"`
	// notice
	Level    string `json:"level"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Text     string `json:"text"`
	Code     string `json:"code"`
	// mode, config, info
	CurrentModeID *string         `json:"currentModeId"`
	ConfigOptions json.RawMessage `json:"configOptions"`
}

// contentBlock is an ACP ContentBlock.
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// toolContent is an ACP ToolCallContent.
type toolContent struct {
	Type       string          `json:"type"`
	Content    json.RawMessage `json:"content"`
	Path       string          `json:"path"`
	OldText    *string         `json:"oldText"`
	NewText    string          `json:"newText"`
	TerminalID string          `json:"terminalId"`
}

// update decodes one `session/update` and hands it to the sink.
func (c *conn) update(params json.RawMessage) {
	var p updateParams
	var u rawUpdate
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.Update, &u) != nil || p.SessionID == "" {
		c.complain("the agent sent a session update that does not decode; it was skipped")
		return
	}
	if out := c.decode(u); out != nil {
		c.emit(p.SessionID, out)
	}
}

// decode maps a raw update to the port's; nil for what the core does not
// show (available commands, unknown variants).
func (c *conn) decode(u rawUpdate) chat.AgentUpdate {
	switch u.Kind {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
		role := map[string]string{"agent_message_chunk": "assistant", "agent_thought_chunk": "reasoning",
			"user_message_chunk": "user"}[u.Kind]
		out := chat.AgentMessageChunk{Role: role, MessageID: u.MessageID}
		var b contentBlock
		_ = json.Unmarshal(u.Content, &b)
		switch b.Type {
		case "text":
			out.Text = b.Text
		case "image":
			if data, err := base64.StdEncoding.DecodeString(b.Data); err == nil {
				out.Images = []chat.AgentImage{{MimeType: b.MimeType, Data: data}}
			}
		default:
			return nil
		}
		return out
	case "tool_call", "tool_call_update":
		return toolCall(u)
	case "plan":
		return chat.AgentPlan{Entries: u.Entries}
	case "usage_update":
		out := chat.AgentContextUsage{}
		if u.Used != nil {
			out.Used = *u.Used
		}
		if u.Size != nil {
			out.Size = *u.Size
		}
		if u.Cost != nil && strings.EqualFold(u.Cost.Currency, "USD") {
			cost := u.Cost.Amount
			out.CostUSD = &cost
		}
		return out
	case "compaction_update":
		return chat.AgentCompaction{ID: u.CompactionID, Status: u.statusOr("completed"), Summary: u.Summary}
	case "notice":
		level := u.Level
		if level == "" {
			level = u.Severity
		}
		msg := u.Message
		if msg == "" {
			msg = u.Text
		}
		if msg == "" {
			var b contentBlock
			_ = json.Unmarshal(u.Content, &b)
			msg = b.Text
		}
		return noticeUpdate(level, u.Code, msg)
	case "current_mode_update":
		return chat.AgentSessionInfo{Mode: u.CurrentModeID}
	case "config_option_update":
		var opts []configOption
		_ = json.Unmarshal(u.ConfigOptions, &opts)
		var st chat.AgentSessionState
		applyOptions(&st, &sessionOptions{}, opts)
		out := chat.AgentSessionInfo{Models: st.Models, Modes: st.Modes}
		if st.Model != "" {
			out.Model = &st.Model
		}
		if st.Mode != "" {
			out.Mode = &st.Mode
		}
		return out
	case "session_info_update":
		return chat.AgentSessionInfo{Title: u.Title}
	}
	return nil
}

func (u rawUpdate) statusOr(def string) string {
	if u.Status != nil && *u.Status != "" {
		return *u.Status
	}
	return def
}

// noticeUpdate is a notice with a known level.
func noticeUpdate(level, code, msg string) chat.AgentNotice {
	switch level {
	case "info", "warning", "error":
	default:
		level = "info"
	}
	return chat.AgentNotice{Level: level, Code: code, Message: msg}
}

// toolCall maps a tool_call or tool_call_update.
func toolCall(u rawUpdate) chat.AgentToolCall {
	out := chat.AgentToolCall{ID: agentToolCallID(u.ToolCallID), New: u.Kind == "tool_call", Title: u.Title, Kind: u.ToolKind, Status: u.Status}
	if u.Content != nil {
		var cs []toolContent
		_ = json.Unmarshal(u.Content, &cs)
		out.Content = make([]chat.AgentToolContent, 0, len(cs))
		for _, tc := range cs {
			switch tc.Type {
			case "content":
				var b contentBlock
				if json.Unmarshal(tc.Content, &b) == nil && b.Type == "text" {
					out.Content = append(out.Content, chat.AgentToolContent{Type: "text", Text: b.Text})
				}
			case "diff":
				out.Content = append(out.Content, chat.AgentToolContent{Type: "diff", Path: tc.Path, OldText: tc.OldText, NewText: tc.NewText})
			case "terminal":
				out.Content = append(out.Content, chat.AgentToolContent{Type: "terminal", TerminalID: tc.TerminalID})
			}
		}
	}
	for _, l := range u.Locations {
		out.Locations = append(out.Locations, l.Path)
	}
	if len(u.RawInput) > 0 && string(u.RawInput) != "null" {
		out.RawInput = u.RawInput
	}
	return out
}

// configOption is an ACP SessionConfigOption of type select, with flat
// or grouped options.
type configOption struct {
	ID           string          `json:"id"`
	Category     string          `json:"category"`
	Type         string          `json:"type"`
	CurrentValue string          `json:"currentValue"`
	Options      json.RawMessage `json:"options"`
}

type selectOption struct {
	Value   string         `json:"value"`
	Name    string         `json:"name"`
	Options []selectOption `json:"options"` // a group's
}

// applyOptions takes the model and mode options into st and remembers
// their ids in opts.
func applyOptions(st *chat.AgentSessionState, opts *sessionOptions, options []configOption) {
	for _, o := range options {
		if o.Type != "" && o.Type != "select" {
			continue
		}
		var raw []selectOption
		_ = json.Unmarshal(o.Options, &raw)
		var choices []chat.AgentChoice
		for _, s := range raw {
			if s.Value != "" {
				choices = append(choices, chat.AgentChoice{ID: s.Value, Name: s.Name})
			}
			for _, g := range s.Options {
				choices = append(choices, chat.AgentChoice{ID: g.Value, Name: g.Name})
			}
		}
		switch o.Category {
		case "model":
			opts.modelOption, st.Models, st.Model = o.ID, choices, o.CurrentValue
		case "mode":
			opts.modeOption, st.Modes, st.Mode = o.ID, choices, o.CurrentValue
		}
	}
}

// parseTime reads an RFC 3339 time; zero when it is not one.
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
