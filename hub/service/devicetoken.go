package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Known devices, in the way of OWASP's device cookies: a successful login
// issues its device a token bound to the user name, and a later login of
// that name presenting it comes from a device known to it, which a name
// under attack does not slow down (LoginLimits). A token is no
// credential: it logs nobody in, it only spares its device the slow-down,
// and only within its own failure budget, so a stolen one buys little.
//
// A token is 57 bytes in unpadded base64url (76 characters):
//
//	version 1 (1 byte) | issued at, Unix seconds, big-endian (8) | random nonce (16) | MAC (32)
//
// The MAC is HMAC-SHA256 over a domain string, the first 25 bytes and the
// user name, under a 32-byte key the Hub makes on first use and keeps in
// the store's settings (settingDeviceKey). The key never leaves the core:
// no response, error or log holds it. The nonce keys the token's failure
// budget. Tokens are not stored: the key alone checks them.

// settingDeviceKey is the setting holding the device token key, base64url.
const settingDeviceKey = "login.device-token-key"

const (
	deviceTokenVersion = 1
	deviceKeyBytes     = 32
	deviceNonceAt      = 1 + 8                     // where the nonce starts
	deviceMACAt        = deviceNonceAt + 16        // where the MAC starts
	deviceTokenBytes   = deviceMACAt + sha256.Size // 57
)

var deviceTokenLen = base64.RawURLEncoding.EncodedLen(deviceTokenBytes)

// deviceKey caches the device token key once read or made.
type deviceKey struct {
	mu     sync.Mutex
	loaded bool   // the store was read; key nil: none is stored
	key    []byte // never changes once set
}

// deviceTokenKey returns the device token key, reading the store the
// first time. When none is stored it returns nil, or, with create, makes
// one and stores it. The write takes no commit: the key is no Hub state
// (nothing shows or publishes it), and it is written at most once.
func (h *Hub) deviceTokenKey(ctx context.Context, create bool) ([]byte, error) {
	k := &h.loginGate.key
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != nil || (k.loaded && !create) {
		return k.key, nil
	}
	var key []byte
	read := func(tx settings) error {
		v, ok, err := tx.Setting(settingDeviceKey)
		if err != nil || !ok {
			return err
		}
		if b, err := base64.RawURLEncoding.DecodeString(v); err == nil && len(b) == deviceKeyBytes {
			key = b
		} // a damaged key checks no token; creating replaces it
		return nil
	}
	var err error
	if create {
		err = h.commit(ctx, func(tx *writes) error {
			if err := read(tx); err != nil || key != nil {
				return err
			}
			fresh := make([]byte, deviceKeyBytes)
			if _, err := rand.Read(fresh); err != nil {
				return err
			}
			if err := tx.PutSetting(settingDeviceKey, base64.RawURLEncoding.EncodeToString(fresh)); err != nil {
				return err
			}
			key = fresh
			return nil
		})
	} else {
		err = h.store.View(ctx, func(tx hub.Tx) error { return read(tx) })
	}
	if err != nil {
		return nil, err
	}
	k.loaded, k.key = true, key
	return key, nil
}

// issueDeviceToken returns a fresh device token for user, or "" when its
// key cannot be had (logged: the login stands, its device stays unknown).
func (h *Hub) issueDeviceToken(ctx context.Context, user string, now time.Time) string {
	key, err := h.deviceTokenKey(ctx, true)
	if err != nil {
		h.log.Warn("no device token issued: its key could not be stored", "err", err)
		return ""
	}
	var raw [deviceTokenBytes]byte
	raw[0] = deviceTokenVersion
	binary.BigEndian.PutUint64(raw[1:deviceNonceAt], uint64(now.Unix()))
	if _, err := rand.Read(raw[deviceNonceAt:deviceMACAt]); err != nil {
		return ""
	}
	copy(raw[deviceMACAt:], deviceTokenMAC(key, raw[:deviceMACAt], user))
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// knownDevice reports whether token makes its device known to user at
// now: the Hub issued it to user less than DeviceLifetime ago. It returns
// the key of the token's failure budget.
func (h *Hub) knownDevice(ctx context.Context, token, user string, now time.Time) (string, bool) {
	if len(token) != deviceTokenLen {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != deviceTokenBytes || raw[0] != deviceTokenVersion {
		return "", false
	}
	key, err := h.deviceTokenKey(ctx, false)
	if err != nil {
		h.log.Warn("device token not checked: its key could not be read", "err", err)
		return "", false
	}
	if key == nil || !hmac.Equal(raw[deviceMACAt:], deviceTokenMAC(key, raw[:deviceMACAt], user)) {
		return "", false
	}
	issued := int64(binary.BigEndian.Uint64(raw[1:deviceNonceAt]))
	if !now.Before(time.Unix(issued, 0).Add(h.loginGate.limits.DeviceLifetime)) {
		return "", false
	}
	return string(raw[deviceNonceAt:deviceMACAt]), true
}

// deviceTokenMAC is the MAC of a token's head for user.
func deviceTokenMAC(key, head []byte, user string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("wharf device token\x00"))
	m.Write(head)
	m.Write([]byte(user))
	return m.Sum(nil)
}
