package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"

	"github.com/wharfhub/wharf/hub"
)

// AddUser creates a user. An existing name is a Conflict.
func (h *Hub) AddUser(ctx context.Context, name, password string) error {
	if err := hub.ValidateUserName(name); err != nil {
		return err
	}
	if err := hub.ValidatePassword(password); err != nil {
		return err
	}
	hash, err := h.hash(password)
	if err != nil {
		return err
	}
	return h.commit(ctx, func(tx *writes) error {
		return tx.CreateUser(hub.User{Name: name, PasswordHash: hash, CreatedAt: h.clock.Now()})
	})
}

// SetPassword replaces a user's password and ends every session of that
// user, so a stolen session does not outlive a password change.
func (h *Hub) SetPassword(ctx context.Context, name, password string) error {
	if err := hub.ValidatePassword(password); err != nil {
		return err
	}
	hash, err := h.hash(password)
	if err != nil {
		return err
	}
	return h.commit(ctx, func(tx *writes) error {
		if err := tx.SetPasswordHash(name, hash); err != nil {
			return err
		}
		_, err := tx.DeleteDeviceSessionsOfUser(name)
		return err
	})
}

// RemoveUser deletes a user and every session of that user.
func (h *Hub) RemoveUser(ctx context.Context, name string) error {
	return h.commit(ctx, func(tx *writes) error { return tx.DeleteUser(name) })
}

// Users lists every user, sorted by name. PasswordHash is cleared.
func (h *Hub) Users(ctx context.Context) ([]hub.User, error) {
	var users []hub.User
	err := h.store.View(ctx, func(tx hub.Tx) error {
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
	if err := hub.ValidateUserName(name); err != nil {
		return "", false, err
	}
	var n int
	if err := h.store.View(ctx, func(tx hub.Tx) error { n, err = tx.CountUsers(); return err }); err != nil || n > 0 {
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
	err = h.commit(ctx, func(tx *writes) error {
		if n, err := tx.CountUsers(); err != nil || n > 0 {
			return err
		}
		created = true
		return tx.CreateUser(hub.User{Name: name, PasswordHash: hash, CreatedAt: h.clock.Now()})
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
		return "", hub.Wrap(hub.Internal, err, "password could not be hashed")
	}
	return s, nil
}
