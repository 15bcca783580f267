package acp_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// An agent that dies in the middle of a turn fails the turn as an exit,
// not as whatever the SDK answers its pending request with once the pipe
// closes ("peer disconnected", -32603): people read "has exited".
func TestATurnWhoseAgentDiesFailsAsAnExit(t *testing.T) {
	// It answers initialize, reads the prompt, and exits without answering.
	script := `read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[],"agentCapabilities":{}}}'
read line
exit 3`
	for i := range 5 { // the race it guards against was lost 3 times in 5: five rounds catch it
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			is := is.New(t)
			rt := acp.New(acp.Options{Env: env(), Commands: map[string][]string{"dies": {"sh", "-c", script}}})
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			conn, err := rt.Start(ctx, "dies", t.TempDir(), func(string, chat.AgentUpdate) {})
			is.NoErr(err) // it answers initialize
			defer conn.Close()
			_, err = conn.Prompt(ctx, "s", chat.AgentPrompt{Text: "hello"})
			is.True(err != nil)                                     // the turn fails
			is.Equal(hub.KindOf(err), hub.Unavailable)              // as the agent being unavailable
			is.True(strings.Contains(hub.MessageOf(err), "exited")) // saying it exited
		})
	}
}
