package chat_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

func TestStreamedAnswer(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	is.True(strings.HasPrefix(id, "scripted:")) // ids are <agentId>:<session>
	rd := r.follow(id)
	res := r.send(id, agentscript.Stream)
	is.True(!res.Held) // an idle conversation takes the message at once
	rd.status(chat.StatusCompleted)
	rd.drain()

	var deltas string
	for _, ev := range rd.seen {
		if ev.Type == chat.EventTextDelta {
			deltas += ev.Delta
		}
	}
	is.Equal(rd.seen[0].Type, chat.EventItemUpsert)            // the user's message comes first
	is.Equal(rd.seen[0].Item["kind"], chat.KindUserMessage)    // as a user_message
	is.Equal(rd.seen[1].Status, string(chat.StatusRunning))    // then the turn runs
	is.Equal(deltas, strings.Join(agentscript.Answer[1:], "")) // the later chunks are deltas
	for i, ev := range rd.seen {
		is.Equal(ev.Sequence, rd.seen[0].Sequence+int64(i)) // sequences increase by one
		is.Equal(ev.ConversationID, id)                     // every event names its conversation
	}

	s, err := r.m.Snapshot(id)
	is.NoErr(err) // the snapshot answers
	its := items(t, s)
	is.Equal(len(ofKind(its, chat.KindReasoning)), 1) // the thought is reasoning
	answers := ofKind(its, chat.KindAssistantMessage)
	is.Equal(len(answers), 2)                                              // the answer and the usage carrier
	is.Equal(answers[0]["markdown"], strings.Join(agentscript.Answer, "")) // the answer whole
	is.Equal(answers[1]["id"], "usage:1")                                  // the carrier's id
	is.Equal(answers[1]["markdown"], "")                                   // with empty markdown
	usage := answers[1]["usage"].(map[string]any)
	is.Equal(usage["input"], float64(agentscript.InputTokens))                // tokens in
	is.Equal(usage["output"], float64(agentscript.OutputTokens))              // and out
	is.Equal(s.Conversation.Status, chat.StatusCompleted)                     // the summary says completed
	is.Equal(s.Conversation.Title, agentscript.Stream)                        // titled after the first message
	is.Equal(s.Cursor, rd.cursor)                                             // the snapshot's cursor is the head
	is.Equal(s.Configuration, chat.Configuration{Model: "fast", Mode: "ask"}) // from the session
}

func TestScriptsBecomeItems(t *testing.T) {
	for _, tc := range []struct {
		script string
		check  func(is *is.I, its []map[string]any)
	}{
		{agentscript.Tool, func(is *is.I, its []map[string]any) {
			tools := ofKind(its, chat.KindTool)
			is.Equal(len(tools), 1)                            // one tool item
			is.Equal(tools[0]["id"], "tool:edit-1")            // named after the call
			is.Equal(tools[0]["status"], "completed")          // completed
			is.Equal(tools[0]["title"], agentscript.ToolTitle) // titled
			diff := tools[0]["content"].([]any)[0].(map[string]any)
			is.Equal(diff["type"], "diff")               // with its diff
			is.Equal(diff["path"], agentscript.DiffPath) // of the file
			is.Equal(diff["oldText"], agentscript.DiffOld)
			is.Equal(diff["newText"], agentscript.DiffNew)
			is.True(tools[0]["completedAt"] != nil) // and when it completed
		}},
		{agentscript.Plan, func(is *is.I, its []map[string]any) {
			plans := ofKind(its, chat.KindTaskProgress)
			is.Equal(len(plans), 1)                                                // the plan is task_progress
			is.Equal(len(plans[0]["entries"].([]any)), len(agentscript.PlanSteps)) // with every step
		}},
		{agentscript.Usage, func(is *is.I, its []map[string]any) {
			w := ofKind(its, chat.KindContextWindow)
			is.Equal(len(w), 1)                                     // usage is the context window
			is.Equal(w[0]["used"], float64(agentscript.UsedTokens)) // used
			is.Equal(w[0]["size"], float64(agentscript.WindowTokens))
			is.Equal(w[0]["costUsd"], agentscript.CostUSD)
		}},
		{agentscript.Compaction, func(is *is.I, its []map[string]any) {
			cs := ofKind(its, chat.KindCompaction)
			is.Equal(len(cs), 1)                            // one compaction item
			is.Equal(cs[0]["status"], "completed")          // completed
			is.Equal(cs[0]["summary"], agentscript.Summary) // with what it kept
		}},
		{agentscript.Notice, func(is *is.I, its []map[string]any) {
			ns := ofKind(its, chat.KindNotice)
			is.Equal(len(ns), 1)                               // one notice
			is.Equal(ns[0]["message"], agentscript.NoticeText) // saying it
			is.Equal(ns[0]["level"], "warning")
		}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			r.rt.SetAutoplay(true)
			id := r.create()
			rd := r.follow(id)
			r.send(id, tc.script)
			rd.status(chat.StatusCompleted)
			s, err := r.m.Snapshot(id)
			is.NoErr(err) // the snapshot answers
			tc.check(is, items(t, s))
		})
	}
}

func TestEchoedUserChunksAreNotShownTwice(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "hello")
	turn := r.turn()
	turn.Send(chat.AgentMessageChunk{Role: "user", Text: "hello"}) // some agents echo the prompt
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.status(chat.StatusCompleted)
	s, _ := r.m.Snapshot(id)
	is.Equal(len(ofKind(items(t, s), chat.KindUserMessage)), 1) // the message once
}

func TestCompactingReturnsToRunning(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	id := r.create()
	rd := r.follow(id)
	r.send(id, "go")
	turn := r.turn()
	turn.Send(chat.AgentCompaction{ID: "c", Status: "in_progress"})
	rd.status(chat.StatusCompacting)
	turn.Send(chat.AgentMessageChunk{Role: "assistant", Text: "back"})
	rd.status(chat.StatusRunning) // the turn resumed
	turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	rd.status(chat.StatusCompleted)
	is.True(true) // reached
}

func TestTurnOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    chat.AgentTurnResult
		err    error
		status chat.Status
		notice string // the notice code expected, "-" for none
	}{
		{"end_turn", chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil, chat.StatusCompleted, "-"},
		{"max_tokens", chat.AgentTurnResult{StopReason: chat.AgentStopMaxTokens}, nil, chat.StatusCompleted, "-"},
		{"refusal", chat.AgentTurnResult{StopReason: chat.AgentStopRefusal}, nil, chat.StatusFailed, "-"},
		{"cancelled", chat.AgentTurnResult{StopReason: chat.AgentStopCancelled}, nil, chat.StatusInterrupted, "-"},
		{"login", chat.AgentTurnResult{}, hub.Wrap(hub.Conflict, chat.ErrAgentLoginRequired, "Scripted needs a login"), chat.StatusFailed, "login-failed"},
		{"broken", chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, errors.New("eof"), "the agent has exited"), chat.StatusFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			id := r.create()
			rd := r.follow(id)
			r.send(id, "go")
			r.turn().End(tc.res, tc.err)
			rd.status(tc.status)
			s, err := r.m.Snapshot(id)
			is.NoErr(err) // the snapshot answers
			ns := ofKind(items(t, s), chat.KindNotice)
			if tc.notice == "-" {
				is.Equal(len(ns), 0) // no notice
				return
			}
			is.Equal(len(ns), 1)              // one notice
			is.Equal(ns[0]["level"], "error") // an error
			if tc.notice != "" {
				is.Equal(ns[0]["code"], tc.notice) // with its code
			}
		})
	}
}

func TestLoginRequiredShowsInTheAgentList(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	rd := r.follow(id)
	r.send(id, agentscript.Auth)
	rd.status(chat.StatusFailed)
	as := r.m.Agents()
	is.Equal(as[0].Availability, "login-required") // the agent needs a login
	is.Equal(as[1].Availability, "not-installed")  // the other is missing

	r.rt.FailSessions("scripted", errors.Join(chat.ErrAgentLoginRequired))
	_, err := r.m.Create(context.Background(), "scripted", "")
	is.True(errors.Is(err, chat.ErrAgentLoginRequired)) // a new session refused until login
}

// An agent that dies mid-turn is said to have exited, whether the
// connection knew it when the turn failed or learnt it just after (a real
// connection fails the turn's request, ACP's -32603, as the agent's
// output ends, moments before it reaps the process).
func TestAnAgentExitMidTurnIsTheNoticesCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		die  func(turn *fakes.AgentTurn)
	}{
		{"the exit known when the turn fails", func(turn *fakes.AgentTurn) {
			turn.Conn.Crash(errors.New("exit status 3"))
		}},
		{"the exit learnt after the turn failed", func(turn *fakes.AgentTurn) {
			turn.End(chat.AgentTurnResult{}, hub.Wrap(hub.Unavailable, errors.New("peer disconnected before response"),
				"Scripted: the turn failed (error -32603)"))
			turn.Conn.Crash(errors.New("exit status 3"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			id := r.create()
			rd := r.follow(id)
			r.send(id, "go")
			tc.die(r.turn())
			ev := rd.until("the exit's notice", func(ev event) bool {
				return ev.Item["kind"] == chat.KindNotice && contains(ev.Item["message"].(string), "exited")
			})
			is.Equal(ev.Item["message"], "Scripted exited during the turn; the next message starts it again.") // says what happened
			is.Equal(ev.Item["level"], "error")
			rd.until("the status saying so", func(ev event) bool {
				return ev.Type == chat.EventStatus && ev.Status == string(chat.StatusFailed) && ev.Message == "the agent exited"
			})
			s, err := r.m.Snapshot(id)
			is.NoErr(err)
			ns := ofKind(items(t, s), chat.KindNotice)
			is.Equal(len(ns), 1)                           // one notice: a failure's is rewritten, not doubled
			is.Equal(ns[0]["message"], ev.Item["message"]) // the exit's
			is.Equal(s.Conversation.Status, chat.StatusFailed)
		})
	}
}
