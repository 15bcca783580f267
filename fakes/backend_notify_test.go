package fakes_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// notifyRig is a fake backend with alpha running.
func notifyRig(t *testing.T) (*fakes.Backend, hub.WorkspaceSession) {
	t.Helper()
	b := newBackend()
	rs, err := b.Start(bounded(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	return b, rs
}

// frames reads n frames of f.
func frames(t *testing.T, f hub.NotificationFeed, n int) []hub.NotificationFrame {
	t.Helper()
	var out []hub.NotificationFrame
	for range n {
		fr, err := f.Next(bounded(t))
		if err != nil {
			t.Fatalf("frame %d: %v", len(out)+1, err)
		}
		out = append(out, fr)
	}
	return out
}

var at = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func TestFakeNotificationFeeds(t *testing.T) {
	question := fakes.Notice("codex:s1", hub.NotifyQuestionPending, "q1", at)
	turn := fakes.Notice("codex:s1", hub.NotifyTurnCompleted, "t1", at)

	t.Run("Notify and Resolve reach open feeds and snapshots", func(t *testing.T) {
		is := is.New(t)
		b, rs := notifyRig(t)
		f, err := rs.OpenNotifications(bounded(t), "")
		is.NoErr(err)
		opening := frames(t, f, 2)
		is.Equal(opening[0], hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: opening[0].Cursor, Reason: "initial",
			Pending: []hub.Notification{}}) // an initial snapshot of nothing
		is.Equal(opening[1], hub.NotificationFrame{Type: hub.NoticeReady, Cursor: opening[0].Cursor}) // then ready

		c1 := b.Notify("alpha", question)
		c2 := b.Notify("alpha", turn)
		is.Equal(frames(t, f, 2), []hub.NotificationFrame{
			{Type: hub.NoticeEvent, Cursor: c1, Notification: question},
			{Type: hub.NoticeEvent, Cursor: c2, Notification: turn},
		}) // announced, in order
		is.Equal(question.ID, `["codex","codex:s1","question-pending","q1"]`) // under a real session's identity
		is.Equal(b.NoticeSnapshot("alpha", "gap"), hub.NotificationFrame{Type: hub.NoticeSnapshot, Cursor: c2, Reason: "gap",
			Pending: []hub.Notification{question}}) // the question alone pending

		c3 := b.Resolve("alpha", question.ID)
		is.Equal(frames(t, f, 1)[0], hub.NotificationFrame{Type: hub.NoticeResolved, Cursor: c3,
			Notification: hub.Notification{ID: question.ID, ConversationID: "codex:s1"}}) // resolved
		is.Equal(b.Resolve("alpha", question.ID), "") // once
		is.Equal(len(b.NoticeSnapshot("alpha", "gap").Pending), 0)
		is.Equal(b.Notify("beta", turn), "") // no session of beta: nothing
	})

	t.Run("a cursor resumes, or is a gap", func(t *testing.T) {
		is := is.New(t)
		b, rs := notifyRig(t)
		c1 := b.Notify("alpha", question)
		c2 := b.Notify("alpha", turn)
		open := func(cursor string, n int) []hub.NotificationFrame {
			f, err := rs.OpenNotifications(bounded(t), cursor)
			is.NoErr(err)
			defer f.Close()
			return frames(t, f, n)
		}
		got := open(c1, 2)
		is.Equal(got[0].Notification, turn)                                        // what followed the cursor
		is.Equal(got[1], hub.NotificationFrame{Type: hub.NoticeReady, Cursor: c2}) // then ready
		got = open("elsewhere:1", 2)
		is.Equal(got[0].Reason, "gap")                         // a cursor not its own is a gap
		is.Equal(got[0].Pending, []hub.Notification{question}) // of what is pending
		b.ForgetNotices("alpha")
		is.Equal(open(c1, 1)[0].Reason, "gap")                                      // a forgotten notice is a gap
		is.Equal(open(c2, 1)[0].Type, hub.NoticeReady)                              // while the head resumes
		is.Equal(b.NotificationOpens("alpha"), []string{c1, "elsewhere:1", c1, c2}) // every cursor asked, in order
	})

	t.Run("FailNextNotifications fails opens in turn", func(t *testing.T) {
		is := is.New(t)
		b, rs := notifyRig(t)
		boom := hub.Errorf(hub.Internal, "boom")
		b.FailNextNotifications("alpha", nil)
		b.FailNextNotifications("alpha", boom)
		_, err := rs.OpenNotifications(bounded(t), "")
		is.Equal(hub.KindOf(err), hub.Unavailable) // the first, unavailable
		_, err = rs.OpenNotifications(bounded(t), "x:1")
		is.Equal(err, error(boom)) // the second as scripted
		f, err := rs.OpenNotifications(bounded(t), "x:2")
		is.NoErr(err) // then it opens
		feed, err := b.WaitNotificationFeed(bounded(t), "alpha", 1)
		is.NoErr(err)
		is.Equal(feed.Cursor, "x:2")                                       // the feed knows its cursor
		is.Equal(b.NotificationOpens("alpha"), []string{"", "x:1", "x:2"}) // failed opens counted too
		f.Close()
		is.True(feed.IsClosed()) // the test sees the Hub close it
	})

	t.Run("HoldNotifications holds opens until released or their context ends", func(t *testing.T) {
		is := is.New(t)
		b, rs := notifyRig(t)
		release := b.HoldNotifications("alpha")
		ctx, cancel := context.WithCancel(bounded(t))
		got := make(chan error, 2)
		go func() {
			_, err := rs.OpenNotifications(ctx, "")
			got <- err
		}()
		_, err := b.WaitNotificationOpens(bounded(t), "alpha", 1)
		is.NoErr(err) // the open is in flight
		cancel()
		is.Equal(hub.KindOf(<-got), hub.Unavailable) // and ends with its context, unavailable
		go func() {
			_, err := rs.OpenNotifications(bounded(t), "")
			got <- err
		}()
		_, err = b.WaitNotificationOpens(bounded(t), "alpha", 2)
		is.NoErr(err)
		release()
		release()       // twice is harmless
		is.NoErr(<-got) // released, it opens
	})

	t.Run("SetNotificationOpener decides by the cursor", func(t *testing.T) {
		is := is.New(t)
		b, rs := notifyRig(t)
		b.SetNotificationOpener("alpha", func(_ context.Context, cursor string) error {
			if cursor == "" {
				return hub.Errorf(hub.Unavailable, "no")
			}
			return nil
		})
		_, err := rs.OpenNotifications(bounded(t), "")
		is.Equal(hub.KindOf(err), hub.Unavailable) // refused
		_, err = rs.OpenNotifications(bounded(t), "x:1")
		is.NoErr(err) // let through
		b.SetNotificationOpener("alpha", nil)
		_, err = rs.OpenNotifications(bounded(t), "")
		is.NoErr(err) // unscripted again
	})

	t.Run("a feed ends as the test or the session says", func(t *testing.T) {
		is := is.New(t)
		b, rs := notifyRig(t)
		f, err := rs.OpenNotifications(bounded(t), "")
		is.NoErr(err)
		feed, err := b.WaitNotificationFeed(bounded(t), "alpha", 1)
		is.NoErr(err)
		snapshot := b.NoticeSnapshot("alpha", "gap")
		feed.Send(snapshot) // any frame, as it is
		feed.End(nil)
		got := frames(t, f, 3)
		is.Equal(got[2], snapshot) // after the opening, what the test sent
		_, err = f.Next(bounded(t))
		is.True(errors.Is(err, io.EOF)) // then the end, in order

		g, err := rs.OpenNotifications(bounded(t), "")
		is.NoErr(err)
		frames(t, g, 2)
		b.Crash("alpha")
		_, err = g.Next(bounded(t))
		is.Equal(hub.KindOf(err), hub.Unavailable) // a crash ends open feeds
		_, err = rs.OpenNotifications(bounded(t), "")
		is.Equal(hub.KindOf(err), hub.Unavailable) // and an ended session opens none
	})
}
