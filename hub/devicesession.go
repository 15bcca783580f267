package hub

import (
	"crypto/sha256"
	"time"
)

// DeviceSessionDigest is the SHA-256 digest of a session id. The id itself is a
// bearer secret and is never stored; only its digest is.
type DeviceSessionDigest [sha256.Size]byte

// DeviceSession is a device session: one login of one user on one device.
type DeviceSession struct {
	Digest      DeviceSessionDigest
	Handle      string // non-secret, random, unrelated to the id
	User        string
	DeviceLabel string
	IssuedAt    time.Time
	ExpiresAt   time.Time
	RevokedAt   time.Time // zero while not revoked
}

// Active reports whether s authenticates at now.
func (s DeviceSession) Active(now time.Time) bool {
	return s.RevokedAt.IsZero() && now.Before(s.ExpiresAt)
}

// DeviceSessionEntry is the public record of a session in the device list.
type DeviceSessionEntry struct {
	Handle      string
	DeviceLabel string
	IssuedAt    time.Time
	Current     bool // the session making the request
}
