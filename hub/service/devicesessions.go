package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"

	"github.com/wharfhub/wharf/hub"
)

const deviceSessionIDBytes = 32

// deviceSessionIDLen is the length of a session id: 32 bytes in unpadded base64url.
var deviceSessionIDLen = base64.RawURLEncoding.EncodedLen(deviceSessionIDBytes)

// newDeviceSessionSecrets returns a fresh session id and an independent handle.
func newDeviceSessionSecrets() (id, handle string, err error) {
	raw := make([]byte, deviceSessionIDBytes+16)
	if _, err := rand.Read(raw); err != nil {
		return "", "", err
	}
	return base64.RawURLEncoding.EncodeToString(raw[:deviceSessionIDBytes]),
		base64.RawURLEncoding.EncodeToString(raw[deviceSessionIDBytes:]), nil
}

// digestOf returns the digest of a syntactically valid session id: 43
// characters of the unpadded base64url alphabet, which is exactly what
// decodes to 32 bytes. It checks the alphabet itself rather than decode,
// so the check allocates nothing on the request path.
func digestOf(id string) (hub.DeviceSessionDigest, bool) {
	if len(id) != deviceSessionIDLen {
		return hub.DeviceSessionDigest{}, false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return hub.DeviceSessionDigest{}, false
		}
	}
	return sha256.Sum256([]byte(id)), true
}

var errNoDeviceSession = hub.Errorf(hub.Unauthenticated, "authentication required")

// Authenticate returns the active session whose id is id. Anything else (a
// malformed, unknown, revoked or expired id, or one whose user was removed)
// is an Unauthenticated error with one message, so callers learn nothing
// about which it was.
func (h *Hub) Authenticate(ctx context.Context, id string) (hub.DeviceSession, error) {
	d, ok := digestOf(id)
	if !ok {
		return hub.DeviceSession{}, errNoDeviceSession
	}
	return h.activeDeviceSession(ctx, d)
}

// activeDeviceSession returns the active session with digest d,
// errNoDeviceSession when there is none, or the store's error. It reads
// memory, not the store (deviceAuth).
func (h *Hub) activeDeviceSession(ctx context.Context, d hub.DeviceSessionDigest) (hub.DeviceSession, error) {
	return h.auth.lookup(ctx, d)
}

// Logout revokes the session whose id is id. An id that does not name an
// active session is Forbidden: there is nothing this caller may revoke.
func (h *Hub) Logout(ctx context.Context, id string) error {
	s, err := h.Authenticate(ctx, id)
	if err != nil {
		if hub.KindOf(err) == hub.Unauthenticated {
			return hub.Errorf(hub.Forbidden, "logout requires an active bearer session")
		}
		return err
	}
	return h.commit(ctx, func(tx *writes) error { return tx.RevokeDeviceSession(s.Digest, h.clock.Now()) })
}

// DeviceSessions lists the active sessions of the caller's user, newest
// first, marking the caller's own.
func (h *Hub) DeviceSessions(ctx context.Context, caller hub.DeviceSession) ([]hub.DeviceSessionEntry, error) {
	var all []hub.DeviceSession
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		all, err = tx.DeviceSessionsOfUser(caller.User)
		return err
	}); err != nil {
		return nil, err
	}
	now := h.clock.Now()
	list := []hub.DeviceSessionEntry{}
	for _, s := range all {
		if s.Active(now) {
			list = append(list, hub.DeviceSessionEntry{Handle: s.Handle, DeviceLabel: s.DeviceLabel, IssuedAt: s.IssuedAt, Current: s.Digest == caller.Digest})
		}
	}
	return list, nil
}

// RevokeDeviceSession revokes the caller's own active session with this
// handle and reports whether it was the caller's current session. A handle
// of another user's session, an unknown handle and an inactive session all
// answer the same NotFound.
func (h *Hub) RevokeDeviceSession(ctx context.Context, caller hub.DeviceSession, handle string) (current bool, err error) {
	now := h.clock.Now()
	err = h.commit(ctx, func(tx *writes) error {
		all, err := tx.DeviceSessionsOfUser(caller.User)
		if err != nil {
			return err
		}
		for _, s := range all {
			if s.Handle == handle && s.Active(now) {
				current = s.Digest == caller.Digest
				return tx.RevokeDeviceSession(s.Digest, now)
			}
		}
		return hub.Errorf(hub.NotFound, "unknown session")
	})
	return current, err
}
