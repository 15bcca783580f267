package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// attachmentEnd waits (a bounded time) for ctx to end and returns its cause, or
// nil when it did not end.
func attachmentEnd(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(5 * time.Second):
		return nil
	}
}

// Every event that ends a device session or the workspace's session ends
// the attachments bound to it at once, with a cause that says which.
func TestEveryEndOfASessionEndsItsAttachments(t *testing.T) {
	for _, tc := range []struct {
		name  string
		end   func(e *liveEnv)
		cause error
	}{
		{"logout", func(e *liveEnv) { must(e.t, e.Logout(e.ctx, e.id)) }, service.ErrAttachmentSessionEnded},
		{"revocation", func(e *liveEnv) {
			_, err := e.RevokeDeviceSession(e.ctx, e.sess, e.sess.Handle)
			must(e.t, err)
		}, service.ErrAttachmentSessionEnded},
		{"password change", func(e *liveEnv) { must(e.t, e.SetPassword(e.ctx, "ann", "a new long passphrase")) }, service.ErrAttachmentSessionEnded},
		{"user removal", func(e *liveEnv) { must(e.t, e.RemoveUser(e.ctx, "ann")) }, service.ErrAttachmentSessionEnded},
		{"expiry", func(e *liveEnv) { e.clock.Advance(e.DeviceSessionLifetime()) }, service.ErrAttachmentSessionEnded},
		{"workspace stop", func(e *liveEnv) {
			_, err := e.StopWorkspace(e.ctx, e.app)
			must(e.t, err)
		}, service.ErrAttachmentWorkspaceStopped},
		{"workspace crash", func(e *liveEnv) { e.backend.Crash(e.app) }, service.ErrAttachmentWorkspaceStopped},
		{"Hub shutdown", func(e *liveEnv) { must(e.t, e.Close()) }, service.ErrAttachmentHubClosing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newLiveEnv(t)
			e.start(e.app)
			ctx, release, err := e.HoldAttachment(e.ctx, e.sess, e.app)
			is.NoErr(err) // attached
			defer release()
			is.True(ctx.Err() == nil) // live until something ends it
			tc.end(e)
			is.Equal(attachmentEnd(ctx), tc.cause) // ended, saying why
		})
	}
}

// The attachments of other sessions and workspaces live on.
func TestAnEndTouchesOnlyWhatItEnds(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t)
	other := e.register(e.repo("/home/ann/other"))
	e.start(e.app)
	e.start(other)
	second, _ := e.login()
	onApp, r1, err := e.HoldAttachment(e.ctx, e.sess, e.app)
	is.NoErr(err)
	defer r1()
	onOther, r2, err := e.HoldAttachment(e.ctx, second, other)
	is.NoErr(err)
	defer r2()
	_, err = e.RevokeDeviceSession(e.ctx, e.sess, e.sess.Handle)
	is.NoErr(err)
	is.Equal(attachmentEnd(onApp), service.ErrAttachmentSessionEnded) // the revoked session's ends
	is.True(onOther.Err() == nil)                                     // the other session's lives on
	_, err = e.StopWorkspace(e.ctx, e.app)
	is.NoErr(err)
	is.True(onOther.Err() == nil) // and so it does when another workspace stops
}

func TestAttachingIsRefusedWhereItCannotLast(t *testing.T) {
	e := newLiveEnv(t)
	stopped := e.register(e.repo("/home/ann/stopped"))
	e.start(e.app)
	revoked, _ := e.login()
	_, err := e.RevokeDeviceSession(e.ctx, revoked, revoked.Handle)
	must(t, err)
	for _, tc := range []struct {
		name   string
		caller hub.DeviceSession
		ws     string
		kind   hub.Kind
	}{
		{"an unknown workspace", e.sess, "nope", hub.NotFound},
		{"a stopped workspace", e.sess, stopped, hub.Unavailable},
		{"a revoked session", revoked, e.app, hub.Unauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, _, err := e.HoldAttachment(e.ctx, tc.caller, tc.ws)
			is.Equal(hub.KindOf(err), tc.kind) // refused
		})
	}
}

// One user holds at most MaxAttachmentsPerUser attachments, over all of
// their device sessions; a release frees a place, and other users are
// not counted against them.
func TestAUserHoldsABoundedNumberOfAttachments(t *testing.T) {
	is := is.New(t)
	e := newLiveEnv(t)
	e.start(e.app)
	second, _ := e.login()
	var releases []func()
	defer func() {
		for _, r := range releases {
			r()
		}
	}()
	for i := range service.MaxAttachmentsPerUser {
		caller := e.sess
		if i%2 == 1 {
			caller = second
		}
		_, release, err := e.HoldAttachment(e.ctx, caller, e.app)
		is.NoErr(err) // within the bound
		releases = append(releases, release)
	}
	_, _, err := e.HoldAttachment(e.ctx, second, e.app)
	is.Equal(hub.KindOf(err), hub.RateLimited) // one more is refused
	is.Equal(hub.RetryAfter(err), time.Second) // saying when to try again
	var he *hub.Error
	is.True(errors.As(err, &he) && he.Message != "") // with a message for people

	e.user("bob")
	res, err := e.Login(e.ctx, hub.LoginRequest{Name: "bob", Password: "correct horse battery", ClientAddr: "127.0.0.1"})
	is.NoErr(err)
	_, rb, err := e.HoldAttachment(e.ctx, res.Session, e.app)
	is.NoErr(err) // another user has their own bound
	rb()

	releases[0]()
	releases[0]() // twice is harmless
	_, release, err := e.HoldAttachment(e.ctx, e.sess, e.app)
	is.NoErr(err) // a released place is free again
	releases[0] = release
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
