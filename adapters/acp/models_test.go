package acp_test

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// TestLegacyModels: an agent that offers its models as Gemini CLI does (a
// `models` object in the session/new result, which the SDK drops, and
// session/set_model) has them listed and set all the same.
func TestLegacyModels(t *testing.T) {
	is := is.New(t)
	rt := acp.New(acp.Options{Env: env(),
		Commands: map[string][]string{"scripted": {agentBin(t), "--raw", "--legacy-models"}}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	conn, err := rt.Start(ctx, "scripted", dir, func(string, chat.AgentUpdate) {})
	is.NoErr(err) // the agent starts
	defer conn.Close()
	st, err := conn.NewSession(ctx, dir)
	is.NoErr(err)                                                                                   // a session opens
	is.Equal(st.Models, []chat.AgentChoice{{ID: "fast", Name: "Fast"}, {ID: "deep", Name: "Deep"}}) // its models are listed
	is.Equal(st.Model, "fast")                                                                      // with the current one
	is.NoErr(conn.SetModel(ctx, st.SessionID, "deep"))                                              // another is set by session/set_model
	is.Equal(hub.KindOf(conn.SetModel(ctx, st.SessionID, "nope")), hub.Invalid)                     // an unknown one is refused as invalid
	_, err = conn.Prompt(ctx, st.SessionID, chat.AgentPrompt{Text: "hello"})
	is.NoErr(err)          // the SDK's own requests still get their answers
	is.NoErr(conn.Close()) // and the agent goes
}
