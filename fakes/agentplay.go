package fakes

import (
	"strconv"
	"strings"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
)

// play plays the script t's prompt names (package agentscript), as the
// scripted ACP agent does; an unknown script answers like echo.
func play(t *AgentTurn) {
	done := func() { t.End(hub.AgentTurnResult{StopReason: hub.AgentStopEndTurn}, nil) }
	say := func(s string) { t.Send(hub.AgentMessageChunk{Role: "assistant", Text: s}) }
	str := func(s string) *string { return &s }
	switch agentscript.Of(t.Prompt.Text) {
	case agentscript.Stream:
		t.Send(hub.AgentMessageChunk{Role: "reasoning", Text: agentscript.Thought})
		for _, s := range agentscript.Answer {
			say(s)
		}
		in, out := int64(agentscript.InputTokens), int64(agentscript.OutputTokens)
		t.End(hub.AgentTurnResult{StopReason: hub.AgentStopEndTurn, Usage: &hub.AgentTokenUsage{Input: &in, Output: &out}}, nil)
	case agentscript.Tool:
		t.Send(hub.AgentToolCall{ID: "edit-1", New: true, Title: str(agentscript.ToolTitle), Kind: str("edit"), Status: str("pending")})
		old := agentscript.DiffOld
		t.Send(hub.AgentToolCall{ID: "edit-1", Status: str("completed"), Content: []hub.AgentToolContent{
			{Type: "diff", Path: agentscript.DiffPath, OldText: &old, NewText: agentscript.DiffNew}}})
		done()
	case agentscript.Permission:
		tool := hub.AgentToolCall{ID: "run-1", New: true, Title: str(agentscript.CommandLine), Kind: str("execute"),
			Status: str("pending"), RawInput: []byte(`{"command":"` + agentscript.CommandLine + `"}`)}
		t.Send(tool)
		_, ch := t.Ask(hub.AgentPermissionRequest{Tool: tool, Options: []hub.AgentPermissionOption{
			{ID: "allow", Name: "Allow", Kind: "allow_once"}, {ID: "deny", Name: "Deny", Kind: "reject_once"}}})
		answer := <-ch
		if answer == nil { // settled: the turn was cancelled
			return
		}
		if answer == "allow" {
			t.Send(hub.AgentToolCall{ID: "run-1", Status: str("completed")})
			say(agentscript.Allowed)
		} else {
			t.Send(hub.AgentToolCall{ID: "run-1", Status: str("failed")})
			say(agentscript.Denied)
		}
		done()
	case agentscript.Question:
		_, ch := t.Ask(hub.AgentQuestionRequest{Message: "What is your name?",
			Schema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		answer, _ := (<-ch).(hub.AgentAnswer)
		if name, ok := answer.Content["name"].(string); ok && answer.Action == "accept" {
			say(agentscript.Greeting + name)
		} else {
			say(agentscript.Declined)
		}
		done()
	case agentscript.Plan:
		var entries []hub.AgentPlanEntry
		for _, s := range agentscript.PlanSteps {
			entries = append(entries, hub.AgentPlanEntry{Content: s, Priority: "medium", Status: "pending"})
		}
		t.Send(hub.AgentPlan{Entries: entries})
		done()
	case agentscript.Usage:
		cost := agentscript.CostUSD
		t.Send(hub.AgentContextUsage{Used: agentscript.UsedTokens, Size: agentscript.WindowTokens, CostUSD: &cost})
		done()
	case agentscript.Compaction:
		t.Send(hub.AgentCompaction{ID: "c1", Status: "in_progress"})
		t.Send(hub.AgentCompaction{ID: "c1", Status: "completed", Summary: agentscript.Summary})
		done()
	case agentscript.Notice:
		t.Send(hub.AgentNotice{Level: "warning", Message: agentscript.NoticeText})
		done()
	case agentscript.Auth:
		t.End(hub.AgentTurnResult{}, LoginRequired(t.Conn.agent.Name))
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
			t.Send(hub.AgentToolCall{ID: "tool-" + strconv.Itoa(i), New: true, Title: str("Read part " + strconv.Itoa(i)),
				Kind: str("read"), Status: str("completed"), Content: []hub.AgentToolContent{{Type: "text", Text: out}}})
		}
		done()
	case agentscript.Garbage:
		t.Send(hub.AgentNotice{Level: "warning", Message: "the agent wrote output that is not ACP; it was skipped"})
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
