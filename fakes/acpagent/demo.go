package main

import (
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// The demonstration turns of --demo, for the dashboard's screenshots
// (bench/screenshots): what a real agent's work looks like, in
// place of the echo of a prompt that names no script. A prompt that
// mentions pushing asks permission to push; any other plays an edit of
// the phone guide with its thought, tool calls, a command, the plan, an
// answer in Markdown and the turn's usage. Nothing here is a test.

// demoGuideOld and demoGuideNew are the phone guide before and after.
const (
	demoGuideOld = "# On your phone\n\nOpen the Hub's address and log in.\n"
	demoGuideNew = "# On your phone\n\n1. Open the Hub's address in the phone's browser.\n" +
		"2. Log in with your name and password; the device label says which phone it is.\n" +
		"3. Add the page to the home screen to open it like an app.\n"
	demoAnswer = "I rewrote **docs/phone.md** as three steps:\n\n" +
		"1. open the Hub's address in the phone's browser,\n" +
		"2. log in (the device label names the phone in *Settings*),\n" +
		"3. add the page to the home screen.\n\n" +
		"All 14 links in `docs/` resolve. Shall I push the change?"
)

// demo plays the demonstration turn for text and reports the prompt's
// answer.
func (t *turn) demo(text string) acp.PromptResponse {
	end := acp.PromptResponse{StopReason: acp.StopReasonEndTurn}
	if strings.Contains(strings.ToLower(text), "push") {
		t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "push-1", "title": "git push origin main",
			"kind": "execute", "status": "pending", "rawInput": map[string]any{"command": "git push origin main"}})
		title := "git push origin main"
		res, err := t.a.conn.RequestPermission(t.ctx, acp.RequestPermissionRequest{SessionId: acp.SessionId(t.sid),
			ToolCall: acp.ToolCallUpdate{ToolCallId: "push-1", Title: &title},
			Options: []acp.PermissionOption{{OptionId: "allow", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionId: "always", Name: "Always allow git push", Kind: acp.PermissionOptionKindAllowAlways},
				{OptionId: "deny", Name: "Deny", Kind: acp.PermissionOptionKindRejectOnce}}})
		if err != nil || res.Outcome.Selected == nil || res.Outcome.Selected.OptionId == "deny" {
			t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "push-1", "status": "failed"})
			t.say("agent_message_chunk", "I left the change unpushed.")
			return end
		}
		t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "push-1", "status": "completed",
			"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "To example.com:site.git\n   4f2a9c1..8b0e3d7  main -> main"}}}})
		t.say("agent_message_chunk", "Pushed to `origin/main`.")
		return end
	}
	plan := func(states ...string) {
		steps := []string{"Read the phone guide", "Rewrite it as steps", "Check the links"}
		var entries []any
		for i, s := range steps {
			entries = append(entries, map[string]any{"content": s, "priority": "medium", "status": states[i]})
		}
		t.update(map[string]any{"sessionUpdate": "plan", "entries": entries})
	}
	t.say("agent_thought_chunk", "The guide has one line. People on a phone need the steps in order, and the device label matters for Settings.")
	plan("in_progress", "pending", "pending")
	t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "read-1", "title": "Read docs/phone.md", "kind": "read",
		"status": "completed", "locations": []any{map[string]any{"path": "docs/phone.md"}}})
	plan("completed", "in_progress", "pending")
	t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "edit-1", "title": "Edit docs/phone.md", "kind": "edit",
		"status": "in_progress"})
	t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "completed",
		"content": []any{map[string]any{"type": "diff", "path": "docs/phone.md", "oldText": demoGuideOld, "newText": demoGuideNew}}})
	plan("completed", "completed", "in_progress")
	t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "links-1", "title": "npm run check-links", "kind": "execute",
		"status": "in_progress", "rawInput": map[string]any{"command": "npm run check-links"}})
	t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "links-1", "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": "> check-links\n✓ 14 links in docs/, none broken"}}}})
	plan("completed", "completed", "completed")
	for _, chunk := range strings.SplitAfter(demoAnswer, " ") {
		t.say("agent_message_chunk", chunk)
	}
	t.update(map[string]any{"sessionUpdate": "usage_update", "used": 18400, "size": 200000,
		"cost": map[string]any{"amount": 0.06, "currency": "USD"}})
	end.Usage = &acp.Usage{InputTokens: 12800, OutputTokens: 940, TotalTokens: 13740}
	return end
}
