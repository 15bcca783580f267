package hub

import (
	"context"
	"io/fs"
	"time"
)

// This file holds every port of the core: the interfaces through which the
// Hub reaches persistence, time and the file system. Adapters implement them;
// fakes implement them deterministically for tests; fakes/porttest holds one
// conformance suite per port that both must pass.

// Store persists the Hub's records. It is a unit-of-work pair in the style of
// bbolt: a closure receives a Tx and the work commits only when the closure
// returns nil.
//
// Contract:
//   - Update runs fn in a write transaction. If fn returns nil the changes
//     commit atomically and durably before Update returns; if fn returns an
//     error (or panics) nothing fn did is kept and Update returns fn's error
//     unchanged. Updates are serialized: no two overlap.
//   - View runs fn in a read-only transaction that sees one consistent
//     snapshot, never a half-applied Update. A mutating Tx method called
//     inside View fails and changes nothing.
//   - fn must not call another port or keep the Tx after it returns; it may
//     be run with a context already cancelled, in which case Update and View
//     return a non-nil error without committing.
//   - Failures of the store itself are reported as Internal errors whose
//     cause is kept for logs.
//   - Store methods are safe for concurrent use.
type Store interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
	// Close releases the store. Calls after Close fail.
	Close() error
}

// Tx is the view of the store inside one unit of work. It is assembled from
// role interfaces, one per family of records.
type Tx interface {
	UserStore
	SessionStore
}

// UserStore holds the Hub's users. Returned values are copies owned by the
// caller.
type UserStore interface {
	// User returns the user with exactly this name, or a NotFound error.
	User(name string) (User, error)
	// Users returns every user, sorted by name.
	Users() ([]User, error)
	// CountUsers reports how many users exist.
	CountUsers() (int, error)
	// CreateUser adds u. A user with the same name already existing is a
	// Conflict error.
	CreateUser(u User) error
	// SetPasswordHash replaces the password hash of the named user (NotFound
	// if absent).
	SetPasswordHash(name, hash string) error
	// DeleteUser removes the named user and, in the same transaction, every
	// session of that user (NotFound if absent).
	DeleteUser(name string) error
}

// SessionStore holds device sessions. A session is found by the SHA-256
// digest of its secret id; the secret itself is never stored.
type SessionStore interface {
	// CreateSession adds s. Its user must exist (NotFound otherwise); a
	// session with the same digest or handle is a Conflict error.
	CreateSession(s Session) error
	// SessionByDigest returns the session with this digest, revoked and
	// expired ones included, or a NotFound error.
	SessionByDigest(d SessionDigest) (Session, error)
	// SessionsOfUser returns every stored session of the named user, revoked
	// and expired ones included, newest IssuedAt first.
	SessionsOfUser(name string) ([]Session, error)
	// RevokeSession marks the session revoked at the given time. Revoking an
	// already revoked session keeps its first revocation time. NotFound if no
	// session has this digest.
	RevokeSession(d SessionDigest, at time.Time) error
	// DeleteSessionsOfUser removes every session of the named user and
	// reports how many were removed.
	DeleteSessionsOfUser(name string) (int, error)
	// DeleteExpiredSessions removes every session whose ExpiresAt is at or
	// before now and reports how many were removed.
	DeleteExpiredSessions(now time.Time) (int, error)
}

// Clock is the only source of time in the core, so tests can move time by
// hand. Implementations are safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to be called once d has elapsed, unless the
	// returned Timer is stopped first. f may run on any goroutine, so it
	// must not need a lock its scheduler holds. A non-positive d fires as
	// soon as possible.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started and reports whether it
	// did so.
	Stop() bool
}

// FS is the file-system surface the core needs for folders on the Hub
// host. Paths are absolute and already validated by the core.
//
// Errors satisfy errors.Is with fs.ErrNotExist (a path or its parent is
// absent), fs.ErrExist (the target already exists), fs.ErrPermission
// (the OS refused), ErrNotEmpty (a directory holds entries) or ErrNotDir. Other
// failures are returned as they are. Methods are safe for concurrent use;
// the core serializes conflicting mutations itself.
type FS interface {
	// Lstat describes path without following a final symbolic link.
	Lstat(path string) (fs.FileInfo, error)
	// ReadDir lists the entries of the directory path, sorted by name.
	ReadDir(path string) ([]fs.DirEntry, error)
	// Mkdir creates the directory path (mode 0755 before umask) and makes
	// the new entry durable. It never replaces anything: an existing path is
	// fs.ErrExist.
	Mkdir(path string) error
	// RenameNoReplace renames the directory oldpath to newpath atomically,
	// durably, and never replacing an existing newpath (fs.ErrExist).
	RenameNoReplace(oldpath, newpath string) error
	// RemoveEmpty removes the directory path only when it is empty
	// (ErrNotEmpty otherwise). A file or a symbolic link is ErrNotDir and
	// is left alone.
	RemoveEmpty(path string) error
	// EvalSymlinks returns path with every symbolic link resolved.
	EvalSymlinks(path string) (string, error)
	// Home returns the home directory of the Hub's OS user.
	Home() (string, error)
}
