package porttest

import (
	"context"
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// notifications runs the WorkspaceSession.OpenNotifications part of the
// Backend contract (hub.NotificationSource and hub.NotificationFeed) on
// sessions whose agents announce nothing: what the feed says of what they
// ask and finish is the session's own business, tested where it is made.
func notifications(t *testing.T, newBackend func(t *testing.T) (hub.Backend, string),
	start func(t *testing.T, b hub.Backend, id, dir string) hub.WorkspaceSession) {
	t.Run("NotificationsOpenWithASnapshot", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openNotifications(t, rs, "")
		snap := nextNotice(t, f)
		is.Equal(snap.Type, hub.NoticeSnapshot)                                                       // a snapshot first
		is.Equal(snap.Reason, "initial")                                                              // as no cursor was given
		is.True(snap.Pending != nil && len(snap.Pending) == 0)                                        // of nothing pending
		is.True(snap.Cursor != "")                                                                    // at a cursor
		is.Equal(nextNotice(t, f), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: snap.Cursor}) // then ready, there
	})

	t.Run("NotificationsResumeFromACursor", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openNotifications(t, rs, "")
		cursor := nextNotice(t, f).Cursor
		g := openNotifications(t, rs, cursor)
		is.Equal(nextNotice(t, g), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: cursor}) // caught up at once: no snapshot
	})

	t.Run("NotificationsAnswerAGap", func(t *testing.T) {
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		earlier := nextNotice(t, openNotifications(t, rs, "")).Cursor
		stopSession(t, rs)
		rs = start(t, b, "alpha", dir)
		for name, cursor := range map[string]string{"unknown": "no-such-epoch:7", "earlier": earlier} {
			t.Run(name, func(t *testing.T) {
				is := is.New(t)
				f := openNotifications(t, rs, cursor)
				snap := nextNotice(t, f)
				is.Equal(snap.Type, hub.NoticeSnapshot)                                                       // a snapshot
				is.Equal(snap.Reason, "gap")                                                                  // of a gap
				is.True(snap.Pending != nil && len(snap.Pending) == 0)                                        // of nothing pending
				is.Equal(nextNotice(t, f), hub.NotificationFrame{Type: hub.NoticeReady, Cursor: snap.Cursor}) // then ready
			})
		}
	})

	t.Run("NotificationsEndWithTheContext", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openNotifications(t, rs, "")
		nextNotice(t, f)
		nextNotice(t, f)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := f.Next(ctx)
		is.True(errors.Is(err, context.Canceled)) // the ctx's error, the feed left open
		_, err = rs.OpenNotifications(ctx, "")
		is.Equal(hub.KindOf(err), hub.Unavailable) // and an open not within its context is unavailable
	})

	t.Run("NotificationsEndOnClose", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openNotifications(t, rs, "")
		nextNotice(t, f)
		nextNotice(t, f)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		waiting := make(chan error, 1)
		go func() {
			_, err := f.Next(ctx) // nothing more comes: it waits
			waiting <- err
		}()
		f.Close()
		f.Close() // twice is harmless
		err := <-waiting
		is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // Close ends a waiting Next at once
		_, err = f.Next(ctx)
		is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // and every later one
	})

	t.Run("StopEndsNotificationFeeds", func(t *testing.T) {
		is := is.New(t)
		b, dir := newBackend(t)
		rs := start(t, b, "alpha", dir)
		f := openNotifications(t, rs, "")
		nextNotice(t, f)
		nextNotice(t, f)
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		defer cancel()
		is.NoErr(rs.Stop(ctx)) // stop the session
		_, err := f.Next(ctx)
		is.True(err != nil && !errors.Is(err, context.DeadlineExceeded)) // the open feed ends, promptly
		g, err := rs.OpenNotifications(ctx, "")
		is.True(g == nil)                          // an ended session opens no feed
		is.Equal(hub.KindOf(err), hub.Unavailable) // it is unavailable
	})
}

// openNotifications opens rs's notification feed from cursor within
// backendTimeout, failing the test otherwise, and closes it at the end of
// the test.
func openNotifications(t *testing.T, rs hub.WorkspaceSession, cursor string) hub.NotificationFeed {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
	defer cancel()
	f, err := rs.OpenNotifications(ctx, cursor)
	if err != nil {
		t.Fatalf("open the notification feed: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// nextNotice returns f's next frame within backendTimeout, failing the
// test otherwise.
func nextNotice(t *testing.T, f hub.NotificationFeed) hub.NotificationFrame {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
	defer cancel()
	fr, err := f.Next(ctx)
	if err != nil {
		t.Fatalf("next frame: %v", err)
	}
	return fr
}
