package porttest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// agentTimeout bounds every step of the AgentRuntime suite.
const agentTimeout = 60 * time.Second

// AgentHarness is what the AgentRuntime suite runs against: a runtime
// whose agent AgentID plays the scripts of package agentscript, in the
// existing folder Dir.
type AgentHarness struct {
	Runtime chat.AgentRuntime
	AgentID string
	Dir     string
}

// recorder is a sink keeping every update by session.
type recorder struct {
	mu      sync.Mutex
	updates map[string][]chat.AgentUpdate
	asked   chan chat.AgentUpdate // permission and question requests
	spoke   chan struct{}         // closed at the first chunk of an answer
	once    sync.Once
}

func newRecorder() *recorder {
	return &recorder{updates: map[string][]chat.AgentUpdate{}, asked: make(chan chat.AgentUpdate, 16), spoke: make(chan struct{})}
}

func (r *recorder) sink(sid string, u chat.AgentUpdate) {
	r.mu.Lock()
	r.updates[sid] = append(r.updates[sid], u)
	r.mu.Unlock()
	switch u := u.(type) {
	case chat.AgentPermissionRequest, chat.AgentQuestionRequest:
		r.asked <- u
	case chat.AgentMessageChunk:
		if u.Role == "assistant" {
			r.once.Do(func() { close(r.spoke) })
		}
	}
}

func (r *recorder) take(sid string) []chat.AgentUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.updates[sid]
	delete(r.updates, sid)
	return u
}

// text joins the chunks of role.
func text(us []chat.AgentUpdate, role string) string {
	var b strings.Builder
	for _, u := range us {
		if c, ok := u.(chat.AgentMessageChunk); ok && c.Role == role {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// AgentRuntime runs the chat.AgentRuntime contract against the harnesses
// newHarness makes, one per subtest.
func AgentRuntime(t *testing.T, newHarness func(t *testing.T) AgentHarness) {
	open := func(t *testing.T) (AgentHarness, chat.AgentConnection, *recorder, string) {
		t.Helper()
		h := newHarness(t)
		rec := newRecorder()
		ctx, cancel := context.WithTimeout(t.Context(), agentTimeout)
		defer cancel()
		conn, err := h.Runtime.Start(ctx, h.AgentID, h.Dir, rec.sink)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
		st, err := conn.NewSession(ctx, h.Dir)
		if err != nil {
			t.Fatalf("new session: %v", err)
		}
		return h, conn, rec, st.SessionID
	}
	prompt := func(t *testing.T, conn chat.AgentConnection, sid, text string) (chat.AgentTurnResult, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), agentTimeout)
		defer cancel()
		return conn.Prompt(ctx, sid, chat.AgentPrompt{Text: text})
	}

	t.Run("AgentsAndUnknownOnes", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		found := false
		for _, d := range h.Runtime.Agents() {
			is.True(!strings.Contains(d.ID, ":")) // ids never hold ':'
			if d.ID == h.AgentID {
				found = true
				is.Equal(d.Availability, chat.AgentAvailable) // the scripted agent is available
			}
		}
		is.True(found) // and listed
		_, err := h.Runtime.Start(t.Context(), "no-such-agent", h.Dir, newRecorder().sink)
		is.Equal(hub.KindOf(err), hub.NotFound) // an unknown agent is not found
	})

	t.Run("NewSessionOffersModelsAndModes", func(t *testing.T) {
		is := is.New(t)
		h := newHarness(t)
		conn, err := h.Runtime.Start(t.Context(), h.AgentID, h.Dir, newRecorder().sink)
		is.NoErr(err) // started
		defer conn.Close()
		st, err := conn.NewSession(t.Context(), h.Dir)
		is.NoErr(err)                                                                // a session
		is.True(st.SessionID != "")                                                  // with an id
		is.Equal(len(st.Models), len(agentscript.Models))                            // the models offered
		is.Equal(len(st.Modes), len(agentscript.Modes))                              // and modes
		is.Equal(st.Model, agentscript.Models[0][0])                                 // the first current
		is.NoErr(conn.SetModel(t.Context(), st.SessionID, agentscript.Models[1][0])) // another model is taken
		is.NoErr(conn.SetMode(t.Context(), st.SessionID, agentscript.Modes[1][0]))   // another mode too
	})

	t.Run("StreamedAnswer", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		res, err := prompt(t, conn, sid, agentscript.Stream)
		is.NoErr(err)                                                         // the turn ends
		is.Equal(res.StopReason, chat.AgentStopEndTurn)                       // at the end of the turn
		us := rec.take(sid)                                                   // every update arrived before Prompt returned
		is.Equal(text(us, "assistant"), strings.Join(agentscript.Answer, "")) // the answer
		is.Equal(text(us, "reasoning"), agentscript.Thought)                  // the thought
		is.True(res.Usage != nil && res.Usage.Input != nil)                   // with usage
		is.Equal(*res.Usage.Input, int64(agentscript.InputTokens))
	})

	t.Run("ToolCallWithDiff", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Tool)
		is.NoErr(err)
		var diff *chat.AgentToolContent
		for _, u := range rec.take(sid) {
			if tc, ok := u.(chat.AgentToolCall); ok && tc.ID == "edit-1" {
				for i := range tc.Content {
					if tc.Content[i].Type == "diff" {
						diff = &tc.Content[i]
					}
				}
			}
		}
		is.True(diff != nil)                         // the tool call carries a diff
		is.Equal(diff.Path, agentscript.DiffPath)    // of the file
		is.Equal(*diff.OldText, agentscript.DiffOld) // from
		is.Equal(diff.NewText, agentscript.DiffNew)  // to
	})

	for _, tc := range []struct{ option, says string }{{"allow", agentscript.Allowed}, {"deny", agentscript.Denied}} {
		t.Run("Permission_"+tc.option, func(t *testing.T) {
			is := is.New(t)
			_, conn, rec, sid := open(t)
			done := make(chan error, 1)
			go func() { _, err := prompt(t, conn, sid, agentscript.Permission); done <- err }()
			var req chat.AgentPermissionRequest
			select {
			case u := <-rec.asked:
				req = u.(chat.AgentPermissionRequest)
			case <-time.After(agentTimeout):
				t.Fatal("no permission request")
			}
			is.Equal(req.Tool.ID, "run-1")                                                      // about the tool call
			is.Equal(len(req.Options), 2)                                                       // with its options
			is.NoErr(conn.AnswerPermission(req.RequestID, tc.option))                           // answered
			is.Equal(hub.KindOf(conn.AnswerPermission(req.RequestID, tc.option)), hub.NotFound) // once
			is.NoErr(<-done)                                                                    // the turn ends
			is.Equal(text(rec.take(sid), "assistant"), tc.says)                                 // as the answer said
		})
	}

	t.Run("Question", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		done := make(chan error, 1)
		go func() { _, err := prompt(t, conn, sid, agentscript.Question); done <- err }()
		var q chat.AgentQuestionRequest
		select {
		case u := <-rec.asked:
			q = u.(chat.AgentQuestionRequest)
		case <-time.After(agentTimeout):
			t.Fatal("no question")
		}
		is.True(len(q.Schema) > 0) // a form
		is.NoErr(conn.AnswerQuestion(q.RequestID, chat.AgentAnswer{Action: "accept", Content: map[string]any{"name": "Ada"}}))
		is.NoErr(<-done)
		is.Equal(text(rec.take(sid), "assistant"), agentscript.Greeting+"Ada") // the answer reached the agent
	})

	// waitAsked returns the next permission request the agent sends.
	waitAsked := func(t *testing.T, rec *recorder) chat.AgentPermissionRequest {
		t.Helper()
		select {
		case u := <-rec.asked:
			return u.(chat.AgentPermissionRequest)
		case <-time.After(agentTimeout):
			t.Fatal("no permission request")
		}
		return chat.AgentPermissionRequest{}
	}
	// settled reports whether the updates of sid settle request id for
	// reason.
	settled := func(rec *recorder, sid, id, reason string) bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, u := range rec.updates[sid] {
			if s, ok := u.(chat.AgentRequestSettled); ok && s.RequestID == id && s.Reason == reason {
				return true
			}
		}
		return false
	}

	t.Run("ListSessions", func(t *testing.T) {
		is := is.New(t)
		h, conn, _, sid := open(t)
		ctx, cancel := context.WithTimeout(t.Context(), agentTimeout)
		defer cancel()
		list, err := conn.ListSessions(ctx, h.Dir)
		if !conn.Info().ListSessions {
			is.Equal(hub.KindOf(err), hub.Conflict) // an agent that cannot list says so
			return
		}
		is.NoErr(err) // listed
		found := false
		for _, s := range list {
			found = found || s.SessionID == sid
		}
		is.True(found) // with the session just opened
	})

	t.Run("CancelSettlesOnlyItsSession", func(t *testing.T) {
		is := is.New(t)
		h, conn, rec, sid := open(t)
		ctx, cancel := context.WithTimeout(t.Context(), agentTimeout)
		defer cancel()
		other, err := conn.NewSession(ctx, h.Dir)
		is.NoErr(err) // a second session
		done := make(chan error, 2)
		go func() { _, err := prompt(t, conn, sid, agentscript.Permission); done <- err }()
		mine := waitAsked(t, rec)
		go func() { _, err := prompt(t, conn, other.SessionID, agentscript.Permission); done <- err }()
		theirs := waitAsked(t, rec)
		is.NoErr(conn.Cancel(ctx, sid))                                        // the first session's turn is cancelled
		is.True(settled(rec, sid, mine.RequestID, "cancelled"))                // its request settled
		is.True(!settled(rec, other.SessionID, theirs.RequestID, "cancelled")) // the other's not
		is.NoErr(conn.AnswerPermission(theirs.RequestID, "allow"))             // and still answerable
		is.NoErr(<-done)
		is.NoErr(<-done) // both turns end
	})

	t.Run("CloseSettlesPendingRequests", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		go func() { _, _ = prompt(t, conn, sid, agentscript.Permission) }()
		req := waitAsked(t, rec)
		is.NoErr(conn.Close())                                        // the agent goes with a request pending
		is.True(settled(rec, sid, req.RequestID, "cancelled"))        // which is settled as cancelled
		is.True(conn.AnswerPermission(req.RequestID, "allow") != nil) // and can no longer be answered
	})

	t.Run("PlanUsageCompactionNotice", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		for _, script := range []string{agentscript.Plan, agentscript.Usage, agentscript.Compaction, agentscript.Notice} {
			_, err := prompt(t, conn, sid, script)
			is.NoErr(err) // each script's turn ends
		}
		var plan, usage, compacted, notice bool
		for _, u := range rec.take(sid) {
			switch u := u.(type) {
			case chat.AgentPlan:
				plan = len(u.Entries) == len(agentscript.PlanSteps)
			case chat.AgentContextUsage:
				usage = u.Used == agentscript.UsedTokens && u.Size == agentscript.WindowTokens &&
					u.CostUSD != nil && *u.CostUSD == agentscript.CostUSD
			case chat.AgentCompaction:
				compacted = compacted || (u.Status == "completed" && u.Summary == agentscript.Summary)
			case chat.AgentNotice:
				notice = u.Message == agentscript.NoticeText && u.Level == "warning"
			}
		}
		is.True(plan)      // the plan
		is.True(usage)     // the usage
		is.True(compacted) // the compaction, which the SDK would drop
		is.True(notice)    // the notice, likewise
	})

	t.Run("AuthRequired", func(t *testing.T) {
		is := is.New(t)
		_, conn, _, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Auth)
		is.True(errors.Is(err, chat.ErrAgentLoginRequired)) // -32000 is a login required
		_, err = prompt(t, conn, sid, "echo still usable")
		is.NoErr(err) // and the connection lives on
	})

	t.Run("CrashMidTurn", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Crash)
		is.Equal(hub.KindOf(err), hub.Unavailable) // the turn fails
		select {
		case <-conn.Done():
		case <-time.After(agentTimeout):
			t.Fatal("the connection did not end")
		}
		is.True(conn.Err() != nil)                                      // saying why
		is.Equal(text(rec.take(sid), "assistant"), agentscript.Partial) // what came before was delivered
	})

	t.Run("Cancel", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		done := make(chan chat.AgentTurnResult, 1)
		go func() { res, _ := prompt(t, conn, sid, agentscript.Cancel); done <- res }()
		select { // wait for the agent to work
		case <-rec.spoke:
		case <-time.After(agentTimeout):
			t.Fatal("the agent never started working")
		}
		is.NoErr(conn.Cancel(t.Context(), sid)) // cancelled
		select {
		case res := <-done:
			is.Equal(res.StopReason, chat.AgentStopCancelled) // the turn ends cancelled
		case <-time.After(agentTimeout):
			t.Fatal("the turn did not end")
		}
	})

	t.Run("FiveMiBLine", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Big)
		is.NoErr(err)                                                         // the turn ends
		is.Equal(len(text(rec.take(sid), "assistant")), agentscript.BigBytes) // with the whole chunk
	})

	t.Run("FloodOfChunks", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Flood)
		is.NoErr(err)                                                                            // the connection survives
		is.Equal(text(rec.take(sid), "assistant"), strings.Repeat("x", agentscript.FloodChunks)) // every chunk, in order
	})

	t.Run("TextInChunks", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Text+" 10000 4096")
		is.NoErr(err)
		us := rec.take(sid)
		is.Equal(text(us, "assistant"), strings.Repeat("t", 10000)) // every byte
		chunks := 0
		for _, u := range us {
			if c, ok := u.(chat.AgentMessageChunk); ok && c.Role == "assistant" {
				chunks++
			}
		}
		is.Equal(chunks, 3) // in chunks of 4 KiB
	})

	t.Run("FloodOfToolOutput", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Tools+" 3 5000")
		is.NoErr(err)
		var calls []chat.AgentToolCall
		for _, u := range rec.take(sid) {
			if c, ok := u.(chat.AgentToolCall); ok {
				calls = append(calls, c)
			}
		}
		is.Equal(len(calls), 3)                                       // every call
		is.Equal(calls[2].ID, "tool-3")                               // in order
		is.Equal(*calls[2].Status, "completed")                       // completed
		is.Equal(calls[2].Content[0].Text, strings.Repeat("o", 5000)) // with its output
	})

	t.Run("Garbage", func(t *testing.T) {
		is := is.New(t)
		_, conn, rec, sid := open(t)
		res, err := prompt(t, conn, sid, agentscript.Garbage)
		is.NoErr(err)                                   // the turn goes on
		is.Equal(res.StopReason, chat.AgentStopEndTurn) // to its end
		us := rec.take(sid)
		noticed := false
		for _, u := range us {
			_, ok := u.(chat.AgentNotice)
			noticed = noticed || ok
		}
		is.True(noticed)                                          // a notice tells of the skipped output
		is.Equal(text(us, "assistant"), agentscript.AfterGarbage) // and what followed arrived
	})

	t.Run("LoadSessionReplays", func(t *testing.T) {
		is := is.New(t)
		h, conn, rec, sid := open(t)
		_, err := prompt(t, conn, sid, agentscript.Stream)
		is.NoErr(err)
		rec.take(sid)
		is.NoErr(conn.Close()) // the agent goes
		rec2 := newRecorder()
		conn2, err := h.Runtime.Start(t.Context(), h.AgentID, h.Dir, rec2.sink)
		is.NoErr(err) // a new agent
		defer conn2.Close()
		is.True(conn2.Info().LoadSession) // that can reopen sessions
		_, err = conn2.LoadSession(t.Context(), sid, h.Dir)
		is.NoErr(err) // reopens the session
		us := rec2.take(sid)
		is.Equal(text(us, "user"), agentscript.Stream)                        // replaying the user's message
		is.Equal(text(us, "assistant"), strings.Join(agentscript.Answer, "")) // and the answer, before returning
		_, err = conn2.LoadSession(t.Context(), "no-such-session", h.Dir)
		is.True(err != nil) // an unknown session is refused
	})
}
