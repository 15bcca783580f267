package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// SessionDigest is the SHA-256 digest of a session id. The id itself is a
// bearer secret and is never stored; only its digest is.
type SessionDigest [sha256.Size]byte

// Session is a device session: one login of one user on one device.
type Session struct {
	Digest      SessionDigest
	Handle      string // non-secret, random, unrelated to the id
	User        string
	DeviceLabel string
	IssuedAt    time.Time
	ExpiresAt   time.Time
	RevokedAt   time.Time // zero while not revoked
}

// Active reports whether s authenticates at now.
func (s Session) Active(now time.Time) bool {
	return s.RevokedAt.IsZero() && now.Before(s.ExpiresAt)
}

// DeviceSession is the public record of a session in the device list.
type DeviceSession struct {
	Handle      string
	DeviceLabel string
	IssuedAt    time.Time
	Current     bool // the session making the request
}

const sessionIDBytes = 32

// sessionIDLen is the length of a session id: 32 bytes in unpadded base64url.
var sessionIDLen = base64.RawURLEncoding.EncodedLen(sessionIDBytes)

// newSessionSecrets returns a fresh session id and an independent handle.
func newSessionSecrets() (id, handle string, err error) {
	raw := make([]byte, sessionIDBytes+16)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw[:sessionIDBytes]),
		base64.RawURLEncoding.EncodeToString(raw[sessionIDBytes:]), nil
}

// digestOf returns the digest of a syntactically valid session id.
func digestOf(id string) (SessionDigest, bool) {
	if len(id) != sessionIDLen {
		return SessionDigest{}, false
	}
	if _, err := base64.RawURLEncoding.DecodeString(id); err != nil {
		return SessionDigest{}, false
	}
	return sha256.Sum256([]byte(id)), true
}

var errNoSession = Errorf(Unauthenticated, "authentication required")

// Authenticate returns the active session whose id is id. Anything else (a
// malformed, unknown, revoked or expired id, or one whose user was removed)
// is an Unauthenticated error with one message, so callers learn nothing
// about which it was.
func (h *Hub) Authenticate(ctx context.Context, id string) (Session, error) {
	d, ok := digestOf(id)
	if !ok {
		return Session{}, errNoSession
	}
	return h.activeSession(ctx, d)
}

// activeSession returns the active session with digest d, errNoSession
// when there is none, or the store's error.
func (h *Hub) activeSession(ctx context.Context, d SessionDigest) (Session, error) {
	var s Session
	err := h.store.View(ctx, func(tx Tx) error {
		var err error
		s, err = tx.SessionByDigest(d)
		return err
	})
	if err != nil {
		if KindOf(err) == NotFound {
			return Session{}, errNoSession
		}
		return Session{}, err
	}
	if !s.Active(h.clock.Now()) {
		return Session{}, errNoSession
	}
	return s, nil
}

// Logout revokes the session whose id is id. An id that does not name an
// active session is Forbidden: there is nothing this caller may revoke.
func (h *Hub) Logout(ctx context.Context, id string) error {
	s, err := h.Authenticate(ctx, id)
	if err != nil {
		if KindOf(err) == Unauthenticated {
			return Errorf(Forbidden, "logout requires an active bearer session")
		}
		return err
	}
	if err := h.update(ctx, func(tx Tx) error { return tx.RevokeSession(s.Digest, h.clock.Now()) }); err != nil {
		return err
	}
	h.endLiveOf(func(ls *LiveStream) bool { return ls.owner == s.Digest })
	return nil
}

// DeviceSessions lists the active sessions of the caller's user, newest
// first, marking the caller's own.
func (h *Hub) DeviceSessions(ctx context.Context, caller Session) ([]DeviceSession, error) {
	var all []Session
	if err := h.store.View(ctx, func(tx Tx) error {
		var err error
		all, err = tx.SessionsOfUser(caller.User)
		return err
	}); err != nil {
		return nil, err
	}
	now := h.clock.Now()
	list := []DeviceSession{}
	for _, s := range all {
		if s.Active(now) {
			list = append(list, DeviceSession{Handle: s.Handle, DeviceLabel: s.DeviceLabel, IssuedAt: s.IssuedAt, Current: s.Digest == caller.Digest})
		}
	}
	return list, nil
}

// RevokeDeviceSession revokes the caller's own active session with this
// handle and reports whether it was the caller's current session. A handle
// of another user's session, an unknown handle and an inactive session all
// answer the same NotFound.
func (h *Hub) RevokeDeviceSession(ctx context.Context, caller Session, handle string) (current bool, err error) {
	now := h.clock.Now()
	var revoked SessionDigest
	err = h.update(ctx, func(tx Tx) error {
		all, err := tx.SessionsOfUser(caller.User)
		if err != nil {
			return err
		}
		for _, s := range all {
			if s.Handle == handle && s.Active(now) {
				current, revoked = s.Digest == caller.Digest, s.Digest
				return tx.RevokeSession(s.Digest, now)
			}
		}
		return Errorf(NotFound, "unknown session")
	})
	if err == nil {
		h.endLiveOf(func(ls *LiveStream) bool { return ls.owner == revoked })
	}
	return current, err
}
