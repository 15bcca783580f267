package chat_test

import (
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// The notification feed's log: cursors, its bounds, its end, and the
// identities of its notices (the occurrences are notices_test.go's).

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
