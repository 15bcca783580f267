package acp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub/chat"
)

// rawTurn runs one prompt against the plain writer started with args and
// returns the answer's text.
func rawTurn(t *testing.T, args ...string) (string, chat.AgentTurnResult, error) {
	t.Helper()
	rt := acp.New(acp.Options{Env: env(), Commands: map[string][]string{"burst": append([]string{agentBin(t), "--raw"}, args...)}})
	var mu sync.Mutex
	var b strings.Builder
	chunks := 0
	sink := func(_ string, u chat.AgentUpdate) {
		if c, ok := u.(chat.AgentMessageChunk); ok {
			mu.Lock()
			b.WriteString(c.Text)
			chunks++
			mu.Unlock()
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conn, err := rt.Start(ctx, "burst", t.TempDir(), sink)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer conn.Close()
	st, err := conn.NewSession(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	res, err := conn.Prompt(ctx, st.SessionID, chat.AgentPrompt{Text: "flood"})
	mu.Lock()
	defer mu.Unlock()
	return b.String(), res, err
}

// TestBurstFasterThanTheSDK floods the connection with pre-encoded lines
// in one write, which the SDK's own reader cannot take (its queue of
// 1,024 overflows and it closes the connection): every chunk arrives.
func TestBurstFasterThanTheSDK(t *testing.T) {
	is := is.New(t)
	text, res, err := rawTurn(t)
	is.NoErr(err)                                                // the connection survived the burst
	is.Equal(res.StopReason, chat.AgentStopEndTurn)              // the turn ended in order
	is.Equal(text, strings.Repeat("x", agentscript.FloodChunks)) // with every chunk before it
}

// TestLineOverTenMiB sends one update line of 12 MiB, which would kill
// the SDK's reader: it arrives whole.
func TestLineOverTenMiB(t *testing.T) {
	is := is.New(t)
	text, res, err := rawTurn(t, "--big", "12")
	is.NoErr(err)                                   // the connection survived the line
	is.Equal(res.StopReason, chat.AgentStopEndTurn) // the turn ended
	is.Equal(len(text), 12<<20)                     // with the whole chunk
}
