package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes/agentscript"
)

// TestChatSurvivesFloodsCrashesAndReconnects sends a flood of 10,000
// chunks and reconnects the live stream in the middle of it, resuming
// from the last cursor read (or, past the relay's log, from a fresh
// snapshot after `resync`): the answer arrives whole, nothing twice. Then
// the agent crashes mid-turn (a notice, `failed`) and writes garbage (a
// notice), and the conversation goes on.
func TestChatSurvivesFloodsCrashesAndReconnects(t *testing.T) {
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	x := startChatHub(ctx, t)
	h, c, token, ws, chatURL := x.h, x.c, x.token, x.ws, x.chatURL()
	post := func(path string, body any) []byte {
		t.Helper()
		resp, b := call(ctx, t, c, "POST", chatURL+path, token, body)
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	var created struct{ Conversation struct{ ID string } }
	is.NoErr(json.Unmarshal(post("conversations", map[string]any{"agent": "scripted"}), &created))
	id := created.Conversation.ID
	cid := url.PathEscape(id)
	var state string                      // the conversation's status in the last snapshot
	snapshot := func() (string, string) { // the answer so far, and the cursor
		t.Helper()
		_, b := call(ctx, t, c, "GET", chatURL+"conversations/"+cid, token, nil)
		valid(t, "ConversationSnapshot", b)
		var s struct {
			Cursor       string
			Conversation struct{ Status string }
			Items        []map[string]any
		}
		is.NoErr(json.Unmarshal(b, &s))
		state = s.Conversation.Status
		text := ""
		for _, it := range s.Items {
			if it["kind"] == "assistant_message" {
				text += it["markdown"].(string)
			}
		}
		return text, s.Cursor
	}
	sub := func(cursor string) string {
		b, _ := json.Marshal([]any{map[string]any{"topic": "conversation", "key": id, "cursor": cursor}})
		return string(b)
	}

	// The flood, with a reconnect in its middle.
	text, cursor := snapshot()
	streamCtx, endStream := context.WithCancel(ctx)
	live := openLive(streamCtx, t, c, h.url, token, ws, sub(cursor))
	post("conversations/"+cid+"/messages", map[string]any{"text": agentscript.Flood})
	var last int64 = -1
	read := func(e chatEnvelope) {
		var ev struct {
			Sequence int64
			Type     string
			Delta    string
			Item     map[string]any
		}
		json.Unmarshal(e.Event.Data, &ev)
		is.True(ev.Sequence > last) // nothing twice, nothing out of order
		last = ev.Sequence
		cursor = e.Cursor
		switch {
		case ev.Type == "item.text_delta":
			text += ev.Delta
		case ev.Type == "item.upsert" && ev.Item["kind"] == "assistant_message":
			text += ev.Item["markdown"].(string)
		}
	}
	live.until("half the flood", func(e chatEnvelope) bool {
		if e.Topic == "conversation" && e.Event.Kind == "data" {
			read(e)
		}
		return len(text) >= agentscript.FloodChunks/2
	})
	endStream() // the connection drops
	live = openLive(ctx, t, c, h.url, token, ws, sub(cursor))
	live.until("the end of the flood", func(e chatEnvelope) bool {
		if e.Topic != "conversation" {
			return false
		}
		switch e.Event.Kind {
		case "resync": // the cursor fell out of the relay's log: start over from a snapshot
			text, cursor = snapshot()
			last = -1
			status, body := postJSON(ctx, t, c, h.url+"api/hub/live/"+live.streamID+"/subscriptions", token,
				map[string]any{"add": []any{map[string]any{"topic": "conversation", "key": id, "cursor": cursor}}}, nil)
			is.Equal(status, http.StatusOK) // resubscribed
			_ = body
			return state == "completed" // the flood may have ended meanwhile
		case "data":
			read(e)
			return e.chat.Type == "conversation.status" && e.chat.Status == "completed"
		}
		return false
	})
	is.Equal(text, strings.Repeat("x", agentscript.FloodChunks)) // every chunk, once

	// A crash mid-turn: a notice saying the agent exited (not that "the
	// turn failed (error -32603)") and `failed`, then the agent is back.
	post("conversations/"+cid+"/messages", map[string]any{"text": agentscript.Crash})
	live.all("the crash", isStatus("failed"), func(e chatEnvelope) bool {
		return e.chat.Item["kind"] == "notice" && e.chat.Item["level"] == "error" &&
			strings.Contains(e.chat.Item["message"].(string), "exited during the turn")
	})
	post("conversations/"+cid+"/messages", map[string]any{"text": agentscript.Garbage})
	live.all("the garbage skipped", isStatus("completed"), func(e chatEnvelope) bool {
		return e.chat.Item["kind"] == "notice" && strings.Contains(e.chat.Item["message"].(string), "not ACP")
	})
	final, _ := snapshot()
	is.True(strings.HasPrefix(final, strings.Repeat("x", agentscript.FloodChunks))) // the flood is still whole
	is.True(strings.HasSuffix(final, agentscript.AfterGarbage))                     // and the agent went on
	is.Equal(strings.Count(final, agentscript.Partial), 1)                          // what it said before crashing, once
}
