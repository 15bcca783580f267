package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

type tx struct {
	ctx    context.Context
	tx     *sql.Tx
	cache  *stmtCache
	missed []string // statements run unprepared, to prepare once this ends
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n) }

// isConstraint reports a UNIQUE or PRIMARY KEY violation. The driver
// reports SQLite's extended code in the message, not as a typed value we
// can depend on across versions.
func isConstraint(err error, what string) bool {
	return err != nil && strings.Contains(err.Error(), what)
}

func (t *tx) User(name string) (hub.User, error) {
	var u hub.User
	var created int64
	err := t.queryRow(`SELECT name, password_hash, created_at FROM users WHERE name = ?`, name).
		Scan(&u.Name, &u.PasswordHash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return hub.User{}, hub.Errorf(hub.NotFound, "user %q not found", name)
	}
	if err != nil {
		return hub.User{}, internal(err)
	}
	u.CreatedAt = fromNanos(created)
	return u, nil
}

// scanner is a row or rows being read.
type scanner interface{ Scan(...any) error }

// queryAll runs q and reads every row with scan.
func queryAll[T any](t *tx, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := t.query(q, args...)
	if err != nil {
		return nil, internal(err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, internal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err)
	}
	return out, nil
}

func scanUser(sc scanner) (hub.User, error) {
	var u hub.User
	var created int64
	err := sc.Scan(&u.Name, &u.PasswordHash, &created)
	u.CreatedAt = fromNanos(created)
	return u, err
}

func (t *tx) Users() ([]hub.User, error) {
	return queryAll(t, scanUser, `SELECT name, password_hash, created_at FROM users ORDER BY name`)
}

func (t *tx) CountUsers() (int, error) {
	var n int
	if err := t.queryRow(`SELECT count(*) FROM users`).Scan(&n); err != nil {
		return 0, internal(err)
	}
	return n, nil
}

func (t *tx) CreateUser(u hub.User) error {
	_, err := t.exec(`INSERT INTO users (name, password_hash, created_at) VALUES (?, ?, ?)`, u.Name, u.PasswordHash, nanos(u.CreatedAt))
	if isConstraint(err, "UNIQUE") {
		return hub.Errorf(hub.Conflict, "user %q already exists", u.Name)
	}
	if err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) SetPasswordHash(name, hash string) error {
	return t.expectOne(hub.Errorf(hub.NotFound, "user %q not found", name),
		`UPDATE users SET password_hash = ? WHERE name = ?`, hash, name)
}

func (t *tx) DeleteUser(name string) error {
	return t.expectOne(hub.Errorf(hub.NotFound, "user %q not found", name), `DELETE FROM users WHERE name = ?`, name)
}

// expectOne runs a statement that must affect exactly one row, answering
// notFound when it affected none.
func (t *tx) expectOne(notFound error, q string, args ...any) error {
	res, err := t.exec(q, args...)
	if err != nil {
		return internal(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return internal(err)
	}
	if n == 0 {
		return notFound
	}
	return nil
}

const deviceSessionCols = `digest, handle, user_name, device_label, issued_at, expires_at, revoked_at`

func scanDeviceSession(sc scanner) (hub.DeviceSession, error) {
	var s hub.DeviceSession
	var digest []byte
	var issued, expires int64
	var revoked sql.NullInt64
	if err := sc.Scan(&digest, &s.Handle, &s.User, &s.DeviceLabel, &issued, &expires, &revoked); err != nil {
		return hub.DeviceSession{}, err
	}
	copy(s.Digest[:], digest)
	s.IssuedAt, s.ExpiresAt = fromNanos(issued), fromNanos(expires)
	if revoked.Valid {
		s.RevokedAt = fromNanos(revoked.Int64)
	}
	return s, nil
}

func (t *tx) CreateDeviceSession(s hub.DeviceSession) error {
	var revoked any
	if !s.RevokedAt.IsZero() {
		revoked = nanos(s.RevokedAt)
	}
	_, err := t.exec(`INSERT INTO sessions (`+deviceSessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		s.Digest[:], s.Handle, s.User, s.DeviceLabel, nanos(s.IssuedAt), nanos(s.ExpiresAt), revoked)
	switch {
	case isConstraint(err, "FOREIGN KEY"):
		return hub.Errorf(hub.NotFound, "user %q not found", s.User)
	case isConstraint(err, "UNIQUE"):
		return hub.Errorf(hub.Conflict, "session already exists")
	case err != nil:
		return internal(err)
	}
	return nil
}

func (t *tx) DeviceSessionByDigest(d hub.DeviceSessionDigest) (hub.DeviceSession, error) {
	s, err := scanDeviceSession(t.queryRow(`SELECT `+deviceSessionCols+` FROM sessions WHERE digest = ?`, d[:]))
	if errors.Is(err, sql.ErrNoRows) {
		return hub.DeviceSession{}, hub.Errorf(hub.NotFound, "session not found")
	}
	if err != nil {
		return hub.DeviceSession{}, internal(err)
	}
	return s, nil
}

func (t *tx) ActiveDeviceSessions(now time.Time) ([]hub.DeviceSession, error) {
	return queryAll(t, scanDeviceSession, `SELECT `+deviceSessionCols+` FROM sessions WHERE revoked_at IS NULL AND expires_at > ?`, nanos(now))
}

func (t *tx) DeviceSessionsOfUser(name string) ([]hub.DeviceSession, error) {
	return queryAll(t, scanDeviceSession, `SELECT `+deviceSessionCols+` FROM sessions WHERE user_name = ? ORDER BY issued_at DESC, handle`, name)
}

func (t *tx) RevokeDeviceSession(d hub.DeviceSessionDigest, at time.Time) error {
	return t.expectOne(hub.Errorf(hub.NotFound, "session not found"),
		`UPDATE sessions SET revoked_at = coalesce(revoked_at, ?) WHERE digest = ?`, nanos(at), d[:])
}

func (t *tx) DeleteDeviceSessionsOfUser(name string) (int, error) {
	return t.count(`DELETE FROM sessions WHERE user_name = ?`, name)
}

func (t *tx) DeleteExpiredDeviceSessions(now time.Time) (int, error) {
	return t.count(`DELETE FROM sessions WHERE expires_at <= ?`, nanos(now))
}

func (t *tx) count(q string, args ...any) (int, error) {
	res, err := t.exec(q, args...)
	if err != nil {
		return 0, internal(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, internal(err)
	}
	return int(n), nil
}
