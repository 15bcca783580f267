package fakes

import (
	"strconv"
	"strings"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub/chat"
)

// play plays the script t's prompt names (package agentscript), as the
// scripted ACP agent does; an unknown script answers like echo.
func play(t *AgentTurn) {
	done := func() { t.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil) }
	say := func(s string) { t.Send(chat.AgentMessageChunk{Role: "assistant", Text: s}) }
	str := func(s string) *string { return &s }
	switch agentscript.Of(t.Prompt.Text) {
	case agentscript.Stream:
		t.Send(chat.AgentMessageChunk{Role: "reasoning", Text: agentscript.Thought})
		for _, s := range agentscript.Answer {
			say(s)
		}
		in, out := int64(agentscript.InputTokens), int64(agentscript.OutputTokens)
		t.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn, Usage: &chat.AgentTokenUsage{Input: &in, Output: &out}}, nil)
	case agentscript.Tool:
		t.Send(chat.AgentToolCall{ID: "edit-1", New: true, Title: str(agentscript.ToolTitle), Kind: str("edit"), Status: str("pending")})
		old := agentscript.DiffOld
		t.Send(chat.AgentToolCall{ID: "edit-1", Status: str("completed"), Content: []chat.AgentToolContent{
			{Type: "diff", Path: agentscript.DiffPath, OldText: &old, NewText: agentscript.DiffNew}}})
		done()
	case agentscript.Permission:
		tool := chat.AgentToolCall{ID: "run-1", New: true, Title: str(agentscript.CommandLine), Kind: str("execute"),
			Status: str("pending"), RawInput: []byte(`{"command":"` + agentscript.CommandLine + `"}`)}
		t.Send(tool)
		_, ch := t.Ask(chat.AgentPermissionRequest{Tool: tool, Options: []chat.AgentPermissionOption{
			{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "deny", Name: "Deny", Kind: "reject_once"}}})
		answer := <-ch
		if answer == nil { // settled: the turn was cancelled
			return
		}
		if answer == "allow" {
			t.Send(chat.AgentToolCall{ID: "run-1", Status: str("completed")})
			say(agentscript.Allowed)
		} else {
			t.Send(chat.AgentToolCall{ID: "run-1", Status: str("failed")})
			say(agentscript.Denied)
		}
		done()
	case agentscript.Question:
		_, ch := t.Ask(chat.AgentQuestionRequest{Message: "What is your name?",
			Schema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		answer, _ := (<-ch).(chat.AgentAnswer)
		if name, ok := answer.Content["name"].(string); ok && answer.Action == "accept" {
			say(agentscript.Greeting + name)
		} else {
			say(agentscript.Declined)
		}
		done()
	case agentscript.Plan:
		var entries []chat.AgentPlanEntry
		for _, s := range agentscript.PlanSteps {
			entries = append(entries, chat.AgentPlanEntry{Content: s, Priority: "medium", Status: "pending"})
		}
		t.Send(chat.AgentPlan{Entries: entries})
		done()
	case agentscript.Usage:
		cost := agentscript.CostUSD
		t.Send(chat.AgentContextUsage{Used: agentscript.UsedTokens, Size: agentscript.WindowTokens, CostUSD: &cost})
		done()
	case agentscript.Compaction:
		t.Send(chat.AgentCompaction{ID: "c1", Status: "in_progress"})
		t.Send(chat.AgentCompaction{ID: "c1", Status: "completed", Summary: agentscript.Summary})
		done()
	case agentscript.Notice:
		t.Send(chat.AgentNotice{Level: "warning", Message: agentscript.NoticeText})
		done()
	case agentscript.Auth:
		t.End(chat.AgentTurnResult{}, LoginRequired(t.Conn.agent.Name))
	case agentscript.Crash:
		say(agentscript.Partial)
		t.Conn.Crash(errCrashed)
	case agentscript.Cancel:
		say(agentscript.Working) // Cancel ends the turn
	case agentscript.Big:
		say(strings.Repeat("b", agentscript.BigBytes))
		done()
	case agentscript.Flood:
		for range agentscript.FloodChunks {
			say("x")
		}
		done()
	case agentscript.Text:
		total, size := agentscript.SizeArgs(t.Prompt.Text, agentscript.TextBytes, agentscript.TextChunk)
		chunk := strings.Repeat("t", size)
		for sent := 0; sent < total; sent += size {
			say(chunk[:min(size, total-sent)])
		}
		done()
	case agentscript.Tools:
		count, size := agentscript.SizeArgs(t.Prompt.Text, agentscript.ToolCalls, agentscript.ToolBytes)
		out := strings.Repeat("o", size)
		for i := 1; i <= count; i++ {
			t.Send(chat.AgentToolCall{ID: "tool-" + strconv.Itoa(i), New: true, Title: str("Read part " + strconv.Itoa(i)),
				Kind: str("read"), Status: str("completed"), Content: []chat.AgentToolContent{{Type: "text", Text: out}}})
		}
		done()
	case agentscript.Garbage:
		t.Send(chat.AgentNotice{Level: "warning", Message: "the agent wrote output that is not ACP; it was skipped"})
		say(agentscript.AfterGarbage)
		done()
	default:
		say(t.Prompt.Text)
		for _, img := range t.Prompt.Images {
			say("image " + img.MimeType)
		}
		done()
	}
}
