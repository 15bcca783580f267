package chat

import (
	"encoding/json"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// apply maps one update of session sid, from the connection src, onto its
// conversation's items (the mapping of the research note: chunks to
// messages and reasoning, tool calls to tool and command items, plan to
// task_progress, usage to context_window, compaction and notices to their
// items, permission and elicitation requests to permission and question
// items). It is the runtime's sink, so it only changes memory.
func (m *Manager) apply(src *source, sid string, u AgentUpdate) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c *conversation
	if a := m.agents[src.agentID]; a != nil {
		c = a.sessions[sid]
	}
	if c == nil || c.closed || c.suppress || m.closed {
		m.refuseLocked(src, u)
		return
	}
	switch u := u.(type) {
	case AgentMessageChunk:
		m.resume(c)
		m.chunk(c, u)
	case AgentToolCall:
		m.resume(c)
		m.closeText(c)
		m.upsert(c, m.tool(c, u))
	case AgentPlan:
		m.closeText(c)
		it := c.byID[KindTaskProgress]
		if it == nil {
			it = m.newItem(c, KindTaskProgress, KindTaskProgress)
		}
		it.Entries = make([]PlanEntry, 0, len(u.Entries))
		for _, e := range u.Entries {
			it.Entries = append(it.Entries, PlanEntry(e))
		}
		m.upsert(c, it)
	case AgentContextUsage:
		it := c.byID[KindContextWindow]
		if it == nil {
			it = m.newItem(c, KindContextWindow, KindContextWindow)
		}
		used, size := u.Used, u.Size
		it.Used, it.Size, it.CostUSD = &used, &size, u.CostUSD
		m.upsert(c, it)
	case AgentCompaction:
		m.compaction(c, u)
	case AgentNotice:
		m.notice(c, u.Level, u.Code, u.Message)
	case AgentSessionInfo:
		m.sessionInfo(c, u)
	case AgentPermissionRequest:
		if m.admitRequest(c, src, u) {
			m.permission(c, src, u)
		}
	case AgentQuestionRequest:
		if m.admitRequest(c, src, u) {
			m.question(c, src, u)
		}
	case AgentRequestSettled:
		m.settledByAgent(c, src, u.RequestID)
	}
}

// resume returns a compacting turn to running once the agent goes on.
func (m *Manager) resume(c *conversation) {
	if c.status == StatusCompacting {
		m.setStatus(c, StatusRunning, "")
	}
}

// chunk extends the message being streamed when the chunk continues it,
// or starts a new item.
func (m *Manager) chunk(c *conversation, u AgentMessageChunk) {
	if u.Text == "" && len(u.Images) == 0 {
		return
	}
	if u.Role == "user" && !c.replaying {
		return // an echo of what the core sent: its user_message item stands for it
	}
	if t := c.text; t != nil && t.role == u.Role && (u.MessageID == "" || u.MessageID == t.messageID) {
		m.extend(c, t, u.Text)
		return
	}
	m.closeText(c)
	var it *Item
	empty := ""
	switch u.Role {
	case "user":
		it = m.newItem(c, KindUserMessage, "")
		for _, img := range u.Images {
			it.Attachments = append(it.Attachments, AttachmentInfo{MimeType: img.MimeType, Size: len(img.Data)})
		}
	case "reasoning":
		it = m.newItem(c, KindReasoning, "")
		it.Markdown = &empty
	default:
		it = m.newItem(c, KindAssistantMessage, "")
		it.Markdown, it.MessageID, it.Agent = &empty, agentID(u.MessageID), c.agentID
	}
	t := &openText{role: u.Role, messageID: u.MessageID, item: it, room: m.bounds.MessageItemBytes}
	c.text = t
	t.add(u.Text)
	m.upsert(c, it)
	m.toldCut(c, t)
}

// extend appends s to the streamed message t: a delta to its readers
// (the whole item, once it closes, for a replayed user message, which
// has no deltas). m.mu held.
func (m *Manager) extend(c *conversation, t *openText, s string) {
	if kept := t.add(s); kept != "" {
		m.grew(c, t.item, len(kept))
		if t.role == "user" {
			t.dirty = true
		} else {
			m.emit(c, &Event{Type: EventTextDelta, ItemID: t.item.ID, Delta: kept})
		}
	}
	m.toldCut(c, t)
	m.trim(c)
}

// toldCut adds the notice of t's cut the first time it cuts; closeText
// restates the figure once the message ends. m.mu held.
func (m *Manager) toldCut(c *conversation, t *openText) {
	if t.cut > 0 && t.told == 0 {
		t.told = t.cut
		m.cutNotice(c, t.item, t.cut)
	}
}

// tool creates or updates the tool (or command) item of a tool call.
func (m *Manager) tool(c *conversation, u AgentToolCall) *Item {
	id := "tool:" + agentID(u.ID)
	it := c.byID[id]
	if it == nil {
		kind := KindTool
		if u.Kind != nil && *u.Kind == "execute" {
			kind = KindCommand
		}
		it = m.newItem(c, kind, id)
		it.StartedAt, it.Status = ms(m.now()), "pending"
	}
	if u.Title != nil {
		it.Title = *u.Title
	}
	if u.Kind != nil {
		it.ToolKind = *u.Kind
	}
	if u.Status != nil {
		it.Status = *u.Status
		if (it.Status == "completed" || it.Status == "failed") && it.CompletedAt == 0 {
			now := ms(m.now())
			elapsed := now - it.StartedAt
			it.CompletedAt, it.ElapsedMs = now, &elapsed
		}
	}
	if u.Content != nil {
		it.Trimmed = false // whole again, until its conversation trims it anew
		it.Content = make([]ToolContent, 0, len(u.Content))
		for _, tc := range u.Content {
			out := ToolContent{Type: tc.Type, Text: tc.Text, Path: tc.Path, OldText: tc.OldText, TerminalID: tc.TerminalID}
			if tc.Type == "diff" {
				nt := tc.NewText
				out.NewText = &nt
			}
			it.Content = append(it.Content, out)
		}
	}
	if u.Locations != nil {
		it.Locations = append([]string(nil), u.Locations...)
	}
	if len(u.RawInput) > 0 && json.Valid(u.RawInput) {
		it.Input = RawJSON(append([]byte(nil), u.RawInput...))
		if it.Kind == KindCommand {
			it.Command = commandOf(u.RawInput)
		}
	}
	return it
}

// commandOf reads the command line out of an execute call's input:
// {"command": "..."} or {"command": ["argv", ...]}.
func commandOf(raw []byte) string {
	var in struct {
		Command json.RawMessage `json:"command"`
	}
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(in.Command, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(in.Command, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}

// compaction records a compaction item and moves a running turn to
// compacting while it lasts.
func (m *Manager) compaction(c *conversation, u AgentCompaction) {
	m.closeText(c)
	id := ""
	if u.ID != "" {
		id = KindCompaction + ":" + agentID(u.ID)
	}
	it := c.byID[id]
	if it == nil {
		it = m.newItem(c, KindCompaction, id)
	}
	it.Status = u.Status
	if u.Summary != "" {
		it.Summary = u.Summary
	}
	m.upsert(c, it)
	switch {
	case u.Status == "in_progress" && c.status == StatusRunning:
		m.setStatus(c, StatusCompacting, "")
	case u.Status != "in_progress":
		m.resume(c)
	}
}

// sessionInfo takes the agent's title (unless the user named the
// conversation; without the characters a title refuses), configuration
// and catalog.
func (m *Manager) sessionInfo(c *conversation, u AgentSessionInfo) {
	if u.Title != nil && !c.titleSet {
		if t, err := checkTitle(hub.RemoveInvisible(*u.Title)); err == nil && t != c.title {
			c.title = t
			m.updated(c)
		}
	}
	st := AgentSessionState{Models: u.Models, Modes: u.Modes}
	if u.Model != nil {
		st.Model = *u.Model
	}
	if u.Mode != nil {
		st.Mode = *u.Mode
	}
	m.learn(m.agent(c.agentID), c, st)
}
