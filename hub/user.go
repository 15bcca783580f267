package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"
	"unicode/utf8"
)

// User is a person who may log in to the Hub. Every user has the same
// powers: they share the daemon's OS user, so the Hub has no roles.
type User struct {
	Name         string
	PasswordHash string // argon2id PHC string; never leaves the core
	CreatedAt    time.Time
}

// Limits on user names and passwords.
const (
	MaxUserNameLen    = 64   // bytes
	MinPasswordLen    = 8    // characters, for passwords the Hub sets
	MaxPasswordLen    = 1024 // bytes; longer input is refused before hashing
	maxDeviceLabelLen = 64   // characters
)

// ValidateUserName checks the rule for user names: 1 to 64 ASCII letters,
// digits, '.', '_' or '-', starting with a letter or digit.
func ValidateUserName(name string) error {
	if name == "" {
		return Errorf(Invalid, "user name is required")
	}
	if len(name) > MaxUserNameLen {
		return Errorf(Invalid, "user name is longer than %d characters", MaxUserNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return Errorf(Invalid, "user name may hold only letters, digits, '.', '_' and '-', and must start with a letter or digit")
		}
	}
	return nil
}

// ValidatePassword checks the rule for passwords the Hub is asked to set:
// valid UTF-8, at least 8 characters, at most 1024 bytes.
func ValidatePassword(password string) error {
	if !utf8.ValidString(password) {
		return Errorf(Invalid, "password is not valid UTF-8")
	}
	if utf8.RuneCountInString(password) < MinPasswordLen {
		return Errorf(Invalid, "password must have at least %d characters", MinPasswordLen)
	}
	if len(password) > MaxPasswordLen {
		return Errorf(Invalid, "password is longer than %d bytes", MaxPasswordLen)
	}
	return nil
}

// AddUser creates a user. An existing name is a Conflict.
func (h *Hub) AddUser(ctx context.Context, name, password string) error {
	if err := ValidateUserName(name); err != nil {
		return err
	}
	if err := ValidatePassword(password); err != nil {
		return err
	}
	hash, err := h.hash(password)
	if err != nil {
		return err
	}
	return h.commit(ctx, func(tx Tx) error {
		return tx.CreateUser(User{Name: name, PasswordHash: hash, CreatedAt: h.clock.Now()})
	})
}

// SetPassword replaces a user's password and ends every session of that
// user, so a stolen session does not outlive a password change.
func (h *Hub) SetPassword(ctx context.Context, name, password string) error {
	if err := ValidatePassword(password); err != nil {
		return err
	}
	hash, err := h.hash(password)
	if err != nil {
		return err
	}
	return h.commit(ctx, func(tx Tx) error {
		if err := tx.SetPasswordHash(name, hash); err != nil {
			return err
		}
		_, err := tx.DeleteDeviceSessionsOfUser(name)
		return err
	})
}

// RemoveUser deletes a user and every session of that user.
func (h *Hub) RemoveUser(ctx context.Context, name string) error {
	return h.commit(ctx, func(tx Tx) error { return tx.DeleteUser(name) })
}

// Users lists every user, sorted by name. PasswordHash is cleared.
func (h *Hub) Users(ctx context.Context) ([]User, error) {
	var users []User
	err := h.store.View(ctx, func(tx Tx) error {
		var err error
		users, err = tx.Users()
		return err
	})
	for i := range users {
		users[i].PasswordHash = ""
	}
	return users, err
}

// EnsureFirstUser creates a user with a random password when the Hub has no
// user at all, and returns that password; created is false (and password
// empty) when a user already existed. The password is returned exactly once
// and is never stored in the clear.
func (h *Hub) EnsureFirstUser(ctx context.Context, name string) (password string, created bool, err error) {
	if err := ValidateUserName(name); err != nil {
		return "", false, err
	}
	var n int
	if err := h.store.View(ctx, func(tx Tx) error { n, err = tx.CountUsers(); return err }); err != nil || n > 0 {
		return "", false, err
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return "", false, err
	}
	password = base64.RawURLEncoding.EncodeToString(raw)
	hash, err := h.hash(password)
	if err != nil {
		return "", false, err
	}
	err = h.commit(ctx, func(tx Tx) error {
		if n, err := tx.CountUsers(); err != nil || n > 0 {
			return err
		}
		created = true
		return tx.CreateUser(User{Name: name, PasswordHash: hash, CreatedAt: h.clock.Now()})
	})
	if err != nil || !created {
		return "", false, err
	}
	return password, true, nil
}

// hash computes a password hash under the Hub's bound on concurrent
// key-derivation work.
func (h *Hub) hash(password string) (string, error) {
	h.kdf <- struct{}{}
	defer func() { <-h.kdf }()
	s, err := hashPassword(h.cfg.Password, password)
	if err != nil {
		return "", Wrap(Internal, err, "password could not be hashed")
	}
	return s, nil
}
