package chat_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// noticeReader follows the Manager's notification feed, as the child's
// feed does.
type noticeReader struct {
	r      *rig
	cursor string
}

// notices opens the feed at cursor: the reader, and the first batch's
// frames.
func (r *rig) notices(cursor string) (*noticeReader, []hub.NotificationFrame) {
	b := r.m.Notices(cursor)
	return &noticeReader{r: r, cursor: b.Cursor}, b.Frames
}

// until reads frames until one of type typ comes, and returns it; a
// snapshot on the way (a gap) fails the test.
func (n *noticeReader) until(what string, typ hub.NotificationFrameType) hub.NotificationFrame {
	t := n.r.t
	t.Helper()
	timeout := time.After(deadline)
	for {
		b := n.r.m.Notices(n.cursor)
		for _, fr := range b.Frames {
			if fr.Type == hub.NoticeSnapshot {
				t.Fatalf("a %s snapshot while waiting for %s", fr.Reason, what)
			}
			n.cursor = fr.Cursor
			if fr.Type == typ {
				return fr
			}
		}
		if b.Ended {
			t.Fatalf("the feed ended while waiting for %s", what)
		}
		select {
		case <-b.Wait:
		case <-timeout:
			t.Fatalf("no %s within %s", what, deadline)
		}
	}
}

// since returns every frame after cursor, now: the feed's whole story.
func (r *rig) since(cursor string) []hub.NotificationFrame {
	r.t.Helper()
	b := r.m.Notices(cursor)
	if len(b.Frames) > 0 && b.Frames[0].Type == hub.NoticeSnapshot {
		r.t.Fatalf("cursor %q was not resumed", cursor)
	}
	return b.Frames
}

// pending returns what a snapshot lists pending now.
func (r *rig) pending() []hub.Notification {
	r.t.Helper()
	_, frames := r.notices("")
	return frames[0].Pending
}

// requestID is the core's id of the only request item of kind in
// conversation id.
func (r *rig) requestID(id, kind string) string {
	r.t.Helper()
	s, err := r.m.Snapshot(id)
	if err != nil {
		r.t.Fatalf("snapshot: %v", err)
	}
	its := ofKind(items(r.t, s), kind)
	if len(its) != 1 {
		r.t.Fatalf("%d %s items, want 1", len(its), kind)
	}
	return strings.TrimPrefix(its[0]["id"].(string), kind+":")
}

func notificationID(t *testing.T, agent, conv string, kind hub.NotificationKind, source string) string {
	t.Helper()
	id, ok := chat.NotificationID(agent, conv, kind, source)
	if !ok {
		t.Fatalf("no notification id for %q", source)
	}
	return id
}

func allowOnly() chat.AgentPermissionRequest {
	return chat.AgentPermissionRequest{Options: []chat.AgentPermissionOption{{ID: "ok", Name: "OK", Kind: "allow_once"}}}
}

func TestARequestIsAnnouncedOnceAndResolvedOnceAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ask      chat.AgentUpdate
		item     string
		kind     hub.NotificationKind
		answerOf func(r *rig, id, req string) error
	}{
		{"a permission request", allowOnly(), chat.KindPermission, hub.NotifyPermissionPending,
			func(r *rig, id, req string) error { return r.m.AnswerPermission(id, req, "ok") }},
		{"a question", chat.AgentQuestionRequest{Message: "Your name?"}, chat.KindQuestion, hub.NotifyQuestionPending,
			func(r *rig, id, req string) error { return r.m.AnswerQuestion(id, req, chat.Answer{Action: "decline"}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			n, first := r.notices("")
			is.Equal(first, []hub.NotificationFrame{{Type: hub.NoticeSnapshot, Cursor: n.cursor, Reason: chat.NoticeInitial,
				Pending: []hub.Notification{}}}) // a reader without a cursor starts with an empty snapshot
			start := n.cursor
			id := r.create()
			r.send(id, "go")
			turn := r.turn()
			turn.Ask(tc.ask)

			ev := n.until("the request's notice", hub.NoticeEvent)
			req := r.requestID(id, tc.item)
			want := hub.Notification{ID: notificationID(t, "scripted", id, tc.kind, req), ConversationID: id, SourceID: req,
				Kind: tc.kind, CreatedAt: epoch}
			is.Equal(ev.Notification, want)                                                       // announced, by the request's id
			is.Equal(ev.Notification.ID, `["scripted","`+id+`","`+string(tc.kind)+`","`+req+`"]`) // a JSON tuple
			is.Equal(r.pending(), []hub.Notification{want})                                       // and pending in a snapshot

			is.NoErr(tc.answerOf(r, id, req))
			res := n.until("the resolution", hub.NoticeResolved)
			is.Equal(res.Notification, hub.Notification{ID: want.ID, ConversationID: id}) // resolved once answered
			is.Equal(len(r.pending()), 0)                                                 // and pending no more

			turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
			done := n.until("the turn's end", hub.NoticeEvent)
			is.Equal(done.Notification.Kind, hub.NotifyTurnCompleted) // then the turn completed

			all := r.since(start)
			is.Equal(len(all), 3)                     // each occurrence told once
			is.Equal(all[0].Notification, want)       // the request
			is.Equal(all[1].Type, hub.NoticeResolved) // its resolution
			is.Equal(all[2], done)                    // the turn
			is.Equal(len(r.since(n.cursor)), 0)       // nothing after the head
		})
	}
}

func TestEveryWayARequestStopsWaitingResolvesIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(r *rig, id, req, agentReq string, turn interface{ Withdraw(string) })
	}{
		{"answered", func(r *rig, id, req, _ string, _ interface{ Withdraw(string) }) {
			if err := r.m.AnswerPermission(id, req, "ok"); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"withdrawn by the agent", func(_ *rig, _, _, agentReq string, turn interface{ Withdraw(string) }) { turn.Withdraw(agentReq) }},
		{"its turn cancelled", func(r *rig, id, _, _ string, _ interface{ Withdraw(string) }) {
			if err := r.m.Cancel(context.Background(), id); err != nil {
				r.t.Fatal(err)
			}
		}},
		{"its agent exited", func(r *rig, _, _, _ string, _ interface{ Withdraw(string) }) {
			r.rt.Connections("scripted")[0].Crash(errors.New("exit status 1"))
		}},
		{"its conversation closed", func(r *rig, id, _, _ string, _ interface{ Withdraw(string) }) {
			if err := r.m.CloseConversation(id); err != nil {
				r.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			n, _ := r.notices("")
			id := r.create()
			r.send(id, "go")
			turn := r.turn()
			defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
			agentReq, _ := turn.Ask(allowOnly())
			ev := n.until("the request's notice", hub.NoticeEvent)
			tc.stop(r, id, ev.Notification.SourceID, agentReq, turn)
			res := n.until("the resolution", hub.NoticeResolved)
			is.Equal(res.Notification, hub.Notification{ID: ev.Notification.ID, ConversationID: id}) // resolved
			is.Equal(len(r.pending()), 0)                                                            // and pending no more
		})
	}
}

func TestOnlyATurnThatCompletesIsAnnounced(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(r *rig, id string, turn interface {
			End(chat.AgentTurnResult, error)
		})
		status    chat.Status
		announced bool
	}{
		{"end_turn", endWith(chat.AgentStopEndTurn, nil), chat.StatusCompleted, true},
		{"the token limit", endWith(chat.AgentStopMaxTokens, nil), chat.StatusCompleted, true},
		{"the request limit", endWith(chat.AgentStopMaxTurnRequests, nil), chat.StatusCompleted, true},
		{"a refusal", endWith(chat.AgentStopRefusal, nil), chat.StatusFailed, false},
		{"a failure", endWith("", errors.New("boom")), chat.StatusFailed, false},
		{"cancelled", func(r *rig, id string, turn interface {
			End(chat.AgentTurnResult, error)
		}) {
			if err := r.m.Cancel(context.Background(), id); err != nil {
				r.t.Fatal(err)
			}
			turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
		}, // as OpenCode answers a cancel
			chat.StatusInterrupted, false},
		{"the agent exited", func(r *rig, _ string, _ interface {
			End(chat.AgentTurnResult, error)
		}) {
			r.rt.Connections("scripted")[0].Crash(errors.New("exit status 3"))
		}, chat.StatusFailed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := newRig(t)
			r.rt.SetIgnoreCancel(true)
			_, first := r.notices("")
			id := r.create()
			rd := r.follow(id)
			r.send(id, "go")
			turn := r.turn()
			tc.end(r, id, turn)
			rd.status(tc.status)
			all := r.since(first[0].Cursor)
			if !tc.announced {
				is.Equal(len(all), 0) // nothing announced
				return
			}
			is.Equal(len(all), 1) // one notice
			n := all[0].Notification
			is.Equal(n.Kind, hub.NotifyTurnCompleted)                                              // of a completed turn
			is.Equal(len(n.SourceID), 32)                                                          // by the turn's own id
			is.Equal(n.ID, notificationID(t, "scripted", id, hub.NotifyTurnCompleted, n.SourceID)) // its identity
			is.Equal(len(r.pending()), 0)                                                          // never pending
		})
	}
}

func endWith(reason chat.AgentStopReason, err error) func(*rig, string, interface {
	End(chat.AgentTurnResult, error)
}) {
	return func(_ *rig, _ string, turn interface {
		End(chat.AgentTurnResult, error)
	}) {
		turn.End(chat.AgentTurnResult{StopReason: reason}, err)
	}
}

// Every turn is its own occurrence, also after the child restarts and
// numbers its turns again: none is ever told under another's identity.
func TestEveryTurnIsItsOwnOccurrenceAcrossRestarts(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	seen := map[string]bool{}
	for restart := range 2 {
		if restart > 0 {
			old := r.m.Notices("").Cursor
			r.m.Close()
			r.m = r.manager()
			_, frames := r.notices(old)
			is.Equal(frames[0].Reason, chat.NoticeGap) // the earlier child's cursor is a gap
		}
		n, _ := r.notices("")
		for range 2 {
			rd := r.follow(id)
			r.send(id, agentscript.Echo)
			rd.status(chat.StatusCompleted)
			ev := n.until("the turn's end", hub.NoticeEvent)
			is.True(!seen[ev.Notification.ID]) // a new identity
			seen[ev.Notification.ID] = true
		}
	}
	is.Equal(len(seen), 4) // four turns, four occurrences
}

// An agent replaying a reopened session's history into the items runs no
// turn here: nothing of it is announced.
func TestAReopenedHistoryAnnouncesNothing(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	r.rt.SetAutoplay(true)
	id := r.create()
	rd := r.follow(id)
	r.send(id, agentscript.Stream)
	rd.status(chat.StatusCompleted)

	r.m.Close()
	r.m = r.manager() // a new child: the history is the agent's to replay
	_, first := r.notices("")
	rd = r.follow(id) // reopens the session in the background
	rd.until("the replayed answer", func(ev event) bool { return ev.Item["kind"] == chat.KindAssistantMessage })
	is.Equal(r.rt.Loads(), 1) // the history was replayed
	rd.drain()
	is.Equal(len(r.since(first[0].Cursor)), 0) // and announced nothing

	r.send(id, agentscript.Echo)
	rd.status(chat.StatusCompleted)
	all := r.since(first[0].Cursor)
	is.Equal(len(all), 1)                                       // the next turn alone is told
	is.Equal(all[0].Notification.Kind, hub.NotifyTurnCompleted) // as completed
}

func TestAReaderResumesAfterItsCursorOrGetsASnapshot(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	n, first := r.notices("")
	start := first[0].Cursor
	id := r.create()
	r.send(id, "go")
	turn := r.turn()
	defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	turn.Ask(allowOnly())
	a := n.until("the first request", hub.NoticeEvent)
	turn.Ask(allowOnly())
	b := n.until("the second request", hub.NoticeEvent)
	is.NoErr(r.m.AnswerPermission(id, a.Notification.SourceID, "ok"))
	n.until("the first's resolution", hub.NoticeResolved)
	head := n.cursor
	epochOf, _, _ := strings.Cut(head, ":")
	other := newRig(t).m.Notices("").Cursor

	for _, tc := range []struct {
		name, cursor string
		frames       int // resumed with this many frames; -1: a gap snapshot
	}{
		{"the start", start, 3},
		{"the first notice", a.Cursor, 2},
		{"the head", head, 0},
		{"malformed", "garbage", -1},
		{"without a sequence", epochOf + ":", -1},
		{"a sequence spelled otherwise", epochOf + ":03", -1},
		{"ahead of the head", epochOf + ":4", -1},
		{"of another child", other, -1},
	} {
		_, frames := r.notices(tc.cursor)
		if tc.frames >= 0 {
			is.Equal(len(frames), tc.frames) // resumed
			continue
		}
		is.Equal(frames, []hub.NotificationFrame{{Type: hub.NoticeSnapshot, Cursor: head, Reason: chat.NoticeGap,
			Pending: []hub.Notification{b.Notification}}}) // a gap: what is still pending, at the head
	}

	r.clock.Advance(chat.NoticeLogAge + time.Millisecond)
	_, frames := r.notices(start)
	is.Equal(frames[0].Reason, chat.NoticeGap) // notices older than the log keeps are a gap
	is.Equal(len(r.since(head)), 0)            // while a reader at the head resumes, however quiet the feed was
}

// The log keeps NoticeLogBytes of notices: a cursor older than that is a
// gap, a recent one resumes.
func TestTheLogKeepsItsByteBound(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	_, first := r.notices("")
	id := r.create()
	r.send(id, "go")
	turn := r.turn()
	defer turn.End(chat.AgentTurnResult{StopReason: chat.AgentStopEndTurn}, nil)
	var recent string
	const pairs = 1500 // about 1 MiB of notices
	for i := range pairs {
		if i == pairs-10 {
			recent = r.m.Notices("").Cursor
		}
		agentReq, _ := turn.Ask(allowOnly())
		turn.Withdraw(agentReq)
	}
	all := r.since(recent)
	is.Equal(len(all), 20) // the last ten requests and resolutions resume
	_, frames := r.notices(first[0].Cursor)
	is.Equal(frames[0].Reason, chat.NoticeGap) // the first are gone
	is.Equal(len(frames[0].Pending), 0)        // and nothing is pending
}

func TestClosingTheManagerEndsTheFeed(t *testing.T) {
	is := is.New(t)
	r := newRig(t)
	b := r.m.Notices("")
	is.True(!b.Ended) // a running feed
	r.m.Close()
	select {
	case <-b.Wait:
	case <-time.After(deadline):
		t.Fatal("the feed's readers were not woken")
	}
	is.True(r.m.Notices(b.Cursor).Ended) // then told it ended
}

func TestNotificationIDs(t *testing.T) {
	is := is.New(t)
	id, ok := chat.NotificationID("codex", "codex:s1", hub.NotifyTurnCompleted, "t1")
	is.True(ok)                                                // made
	is.Equal(id, `["codex","codex:s1","turn-completed","t1"]`) // a JSON tuple of the four
	_, ok = chat.NotificationID("codex", "codex:"+strings.Repeat("s", 480), hub.NotifyTurnCompleted, "t1")
	is.True(!ok) // none longer than 512 bytes
	_, ok = chat.NotificationID("codex", "codex:\xff", hub.NotifyTurnCompleted, "t1")
	is.True(!ok) // none of invalid UTF-8, which JSON would change
}
