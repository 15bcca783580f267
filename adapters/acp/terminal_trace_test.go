package acp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/chat"
)

// nextToolCall waits for the next tool call the sink received.
func nextToolCall(t *testing.T, got <-chan chat.AgentToolCall) chat.AgentToolCall {
	t.Helper()
	select {
	case u := <-got:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no tool call reached the conversation")
		return chat.AgentToolCall{}
	}
}

func TestEveryTerminalLeavesATraceInItsConversation(t *testing.T) {
	is := is.New(t)
	got := make(chan chat.AgentToolCall, 16)
	sessions := make(chan string, 16)
	c := testConn(t, testRuntime(), t.TempDir(), func(sid string, u chat.AgentUpdate) {
		if tc, ok := u.(chat.AgentToolCall); ok {
			sessions <- sid
			got <- tc
		}
	})
	id, err := c.terms.create(acpsdk.CreateTerminalRequest{SessionId: "s1", Command: "sh",
		Args: []string{"-c", "echo hi; exit 3"}})
	is.NoErr(err) // started

	start := nextToolCall(t, got)
	is.Equal(<-sessions, "s1")                                                    // in the session that ran it
	is.True(start.New)                                                            // a new tool call
	is.True(start.Kind != nil && *start.Kind == "execute")                        // a command
	is.True(start.Status != nil && *start.Status == "in_progress")                // running
	is.True(start.Title != nil && *start.Title == `Run: sh -c 'echo hi; exit 3'`) // its command line, as a shell reads it
	var in struct {
		Command    string   `json:"command"`
		Argv       []string `json:"argv"`
		Cwd        string   `json:"cwd"`
		TerminalID string   `json:"terminalId"`
	}
	is.NoErr(json.Unmarshal(start.RawInput, &in))
	is.Equal(in.Command, `sh -c 'echo hi; exit 3'`)            // the command for people
	is.Equal(in.Argv, []string{"sh", "-c", "echo hi; exit 3"}) // and exactly what ran
	is.Equal(in.Cwd, c.dir)                                    // where
	is.Equal(in.TerminalID, id)                                // which terminal

	end := nextToolCall(t, got)
	is.Equal(<-sessions, "s1")
	is.Equal(end.ID, start.ID)                            // the same tool call
	is.True(!end.New)                                     // updated
	is.True(end.Status != nil && *end.Status == "failed") // a non-zero exit failed
	is.True(len(end.Content) > 0)                         // with what it said
	text := ""
	for _, ct := range end.Content {
		text += ct.Text + "\n"
	}
	is.True(strings.Contains(text, "hi\n"))        // the tail of its output
	is.True(strings.Contains(text, "exit code 3")) // and how it ended
}
