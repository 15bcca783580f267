package service

import (
	"context"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The consequences of the device sessions' writes (writes.go): a login,
// a logout or revocation, expired sessions deleted, every session of a
// user ended. Each changes the in-memory table that authenticates
// requests (deviceauth.go) before the operation returns; an ended session
// also ends its live streams and its attachments (attachments.go).

// deviceChange is a change of the device-session table.
type deviceChange interface {
	change
	// applyTo applies the change to a table of active sessions.
	applyTo(table map[hub.DeviceSessionDigest]hub.DeviceSession)
}

// applyDevice applies c to the Hub's table.
func applyDevice(h *Hub, c deviceChange) (took, shown bool) {
	h.auth.apply(c)
	return true, false
}

type deviceSessionCreated struct{ session hub.DeviceSession }

func (c deviceSessionCreated) apply(h *Hub) (bool, bool)                 { return applyDevice(h, c) }
func (deviceSessionCreated) publish(context.Context, *Hub, *publication) {}
func (c deviceSessionCreated) applyTo(t map[hub.DeviceSessionDigest]hub.DeviceSession) {
	t[c.session.Digest] = c.session
}

type deviceSessionRevoked struct{ digest hub.DeviceSessionDigest }

func (c deviceSessionRevoked) apply(h *Hub) (bool, bool) { return applyDevice(h, c) }
func (c deviceSessionRevoked) publish(_ context.Context, h *Hub, _ *publication) {
	h.live.EndDeviceSessionStreams(c.digest)
	h.attach.endDeviceSessions(c.digest)
}
func (c deviceSessionRevoked) applyTo(t map[hub.DeviceSessionDigest]hub.DeviceSession) {
	delete(t, c.digest)
}

// deviceSessionsExpired: the sessions no longer active at `at` were
// deleted (their streams end at their next keepalive, which checks; their
// attachments ended at the expiry itself, and any left end now).
type deviceSessionsExpired struct{ at time.Time }

func (c deviceSessionsExpired) apply(h *Hub) (bool, bool) { return applyDevice(h, c) }
func (c deviceSessionsExpired) publish(_ context.Context, h *Hub, _ *publication) {
	h.attach.endWhere(ErrAttachmentSessionEnded, func(a *attachment) bool { return !a.owner.Active(c.at) })
}
func (c deviceSessionsExpired) applyTo(t map[hub.DeviceSessionDigest]hub.DeviceSession) {
	for d, s := range t {
		if !s.Active(c.at) {
			delete(t, d)
		}
	}
}

// userSignedOut: every device session of a user ended (a password
// change, the user's removal).
type userSignedOut struct{ user string }

func (c userSignedOut) apply(h *Hub) (bool, bool) { return applyDevice(h, c) }
func (c userSignedOut) publish(_ context.Context, h *Hub, _ *publication) {
	h.live.EndUserStreams(c.user)
	h.attach.endWhere(ErrAttachmentSessionEnded, func(a *attachment) bool { return a.owner.User == c.user })
}
func (c userSignedOut) applyTo(t map[hub.DeviceSessionDigest]hub.DeviceSession) {
	for d, s := range t {
		if s.User == c.user {
			delete(t, d)
		}
	}
}

// deviceSessionsGone: a reload of the table from the store (another
// process changed it: `wharf user passwd` beside a running daemon) found
// these sessions gone. The table already holds the reload; their streams
// end.
type deviceSessionsGone struct{ digests []hub.DeviceSessionDigest }

func (deviceSessionsGone) apply(*Hub) (took, shown bool) { return true, false }
func (c deviceSessionsGone) publish(_ context.Context, h *Hub, _ *publication) {
	h.live.EndDeviceSessionStreams(c.digests...)
	h.attach.endDeviceSessions(c.digests...)
}
