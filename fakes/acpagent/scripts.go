package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/fakes/agentscript"
)

// turn is one prompt being played.
type turn struct {
	a   *agent
	ctx context.Context
	sid string
}

// update writes one raw session/update line and records it for replay.
func (t *turn) update(u map[string]any) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
		"params": map[string]any{"sessionId": t.sid, "update": u}})
	line = append(line, '\n')
	t.a.out.Write(line)
	if f, err := os.OpenFile(t.a.history(t.sid), os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
		f.Write(line)
		f.Close()
	}
}

func (t *turn) say(kind, text string) {
	t.update(map[string]any{"sessionUpdate": kind, "content": map[string]any{"type": "text", "text": text}})
}

func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	t := &turn{a: a, ctx: ctx, sid: string(p.SessionId)}
	text := ""
	var images []string
	for _, b := range p.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
		if b.Image != nil {
			images = append(images, b.Image.MimeType)
		}
	}
	t.say("user_message_chunk", text)
	end := acp.PromptResponse{StopReason: acp.StopReasonEndTurn}
	str := func(s string) *string { return &s }
	switch agentscript.Of(text) {
	case agentscript.Stream:
		t.say("agent_thought_chunk", agentscript.Thought)
		for _, s := range agentscript.Answer {
			t.say("agent_message_chunk", s)
		}
		end.Usage = &acp.Usage{InputTokens: agentscript.InputTokens, OutputTokens: agentscript.OutputTokens,
			TotalTokens: agentscript.InputTokens + agentscript.OutputTokens}
	case agentscript.Tool:
		t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "edit-1", "title": agentscript.ToolTitle,
			"kind": "edit", "status": "pending"})
		t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "edit-1", "status": "completed",
			"content": []any{map[string]any{"type": "diff", "path": agentscript.DiffPath, "oldText": agentscript.DiffOld,
				"newText": agentscript.DiffNew}}})
	case agentscript.Permission:
		t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "run-1", "title": agentscript.CommandLine,
			"kind": "execute", "status": "pending", "rawInput": map[string]any{"command": agentscript.CommandLine}})
		res, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{SessionId: p.SessionId,
			ToolCall: acp.ToolCallUpdate{ToolCallId: "run-1", Title: str(agentscript.CommandLine)},
			Options: []acp.PermissionOption{{OptionId: "allow", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionId: "deny", Name: "Deny", Kind: acp.PermissionOptionKindRejectOnce}}})
		switch {
		case err != nil || res.Outcome.Cancelled != nil:
			return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
		case res.Outcome.Selected != nil && res.Outcome.Selected.OptionId == "allow":
			t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "run-1", "status": "completed"})
			t.say("agent_message_chunk", agentscript.Allowed)
		default:
			t.update(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "run-1", "status": "failed"})
			t.say("agent_message_chunk", agentscript.Denied)
		}
	case agentscript.Question:
		var req acp.UnstableCreateElicitationRequest
		_ = json.Unmarshal([]byte(`{"sessionId":"`+t.sid+`","mode":"form","message":"What is your name?",`+
			`"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`), &req)
		res, err := a.conn.UnstableCreateElicitation(ctx, req)
		if name, ok := accepted(res, err); ok {
			t.say("agent_message_chunk", agentscript.Greeting+name)
		} else {
			t.say("agent_message_chunk", agentscript.Declined)
		}
	case agentscript.Plan:
		var entries []any
		for _, s := range agentscript.PlanSteps {
			entries = append(entries, map[string]any{"content": s, "priority": "medium", "status": "pending"})
		}
		t.update(map[string]any{"sessionUpdate": "plan", "entries": entries})
	case agentscript.Usage:
		t.update(map[string]any{"sessionUpdate": "usage_update", "used": agentscript.UsedTokens,
			"size": agentscript.WindowTokens, "cost": map[string]any{"amount": agentscript.CostUSD, "currency": "USD"}})
	case agentscript.Compaction:
		t.update(map[string]any{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"})
		t.update(map[string]any{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed",
			"summary": agentscript.Summary})
	case agentscript.Notice:
		t.update(map[string]any{"sessionUpdate": "notice", "level": "warning", "message": agentscript.NoticeText})
	case agentscript.Auth:
		return acp.PromptResponse{}, loginRequired()
	case agentscript.Crash:
		t.say("agent_message_chunk", agentscript.Partial)
		os.Exit(3)
	case agentscript.Cancel:
		t.say("agent_message_chunk", agentscript.Working)
		<-ctx.Done() // session/cancel ends the prompt's context
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case agentscript.Big:
		t.say("agent_message_chunk", strings.Repeat("b", agentscript.BigBytes))
	case agentscript.Flood:
		for range agentscript.FloodChunks {
			t.say("agent_message_chunk", "x")
		}
	case agentscript.Text:
		total, size := agentscript.SizeArgs(text, agentscript.TextBytes, agentscript.TextChunk)
		chunk := strings.Repeat("t", size)
		for sent := 0; sent < total && ctx.Err() == nil; sent += size {
			t.say("agent_message_chunk", chunk[:min(size, total-sent)])
		}
	case agentscript.Tools:
		count, size := agentscript.SizeArgs(text, agentscript.ToolCalls, agentscript.ToolBytes)
		out := strings.Repeat("o", size)
		for i := 1; i <= count && ctx.Err() == nil; i++ {
			t.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": fmt.Sprintf("tool-%d", i),
				"title": fmt.Sprintf("Read part %d", i), "kind": "read", "status": "completed",
				"content": []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": out}}}})
		}
	case agentscript.Pace:
		rate, count := agentscript.PaceArgs(text)
		start := time.Now()
		for i := range count {
			if d := time.Until(start.Add(time.Duration(float64(i) * float64(time.Second) / rate))); d > 0 {
				select {
				case <-ctx.Done():
					return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
				case <-time.After(d):
				}
			}
			t.say("agent_message_chunk", agentscript.PaceChunk(i, time.Now()))
		}
	case agentscript.Garbage:
		a.out.Write([]byte("this is not json\n"))
		t.say("agent_message_chunk", agentscript.AfterGarbage)
	default:
		if a.demo {
			return t.demo(text), nil
		}
		t.say("agent_message_chunk", text)
		for _, m := range images {
			t.say("agent_message_chunk", "image "+m)
		}
	}
	return end, nil
}

// accepted reads an accepted elicitation's name.
func accepted(res acp.UnstableCreateElicitationResponse, err error) (string, bool) {
	if err != nil || res.Accept == nil {
		return "", false
	}
	name, ok := res.Accept.Content["name"].(string)
	return name, ok
}
