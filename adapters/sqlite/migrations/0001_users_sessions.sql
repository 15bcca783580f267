-- Users and their device sessions. Times are Unix nanoseconds.
CREATE TABLE users (
	name          TEXT PRIMARY KEY,
	password_hash TEXT NOT NULL,
	created_at    INTEGER NOT NULL
) STRICT;

-- A session is found by the SHA-256 digest of its secret id; the id itself
-- is never stored. Removing a user removes its sessions.
CREATE TABLE sessions (
	digest       BLOB PRIMARY KEY,
	handle       TEXT NOT NULL UNIQUE,
	user_name    TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
	device_label TEXT NOT NULL,
	issued_at    INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	revoked_at   INTEGER
) STRICT;

CREATE INDEX sessions_by_user ON sessions(user_name, issued_at DESC);
CREATE INDEX sessions_by_expiry ON sessions(expires_at);
