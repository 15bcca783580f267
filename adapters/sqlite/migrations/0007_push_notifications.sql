-- The push-notification family (hub.NotificationStore): the devices users
-- enrolled for Web Push, the journal of deliveries to them, and each
-- workspace's notification-feed cursor. Times are Unix nanoseconds, as in
-- 0001; a NULL time is a zero time.Time ("never", "not yet").
--
-- Delivery states, notification kinds and cutoff categories are checked
-- by the adapter on the way in and on the way out (a row it cannot decode
-- is an error, never a guess), not by CHECK constraints here, as 0004
-- does for the credentials' closed sets: naming a new kind should not need
-- a migration.

-- seq is the rowid: a new row always gets a seq above every existing one,
-- so ORDER BY seq is creation order; replacing a device keeps its row.
-- subscription is the browser's push subscription exactly as the key
-- vault sealed it: no endpoint or key is ever stored in the clear.
-- device_session is the digest of the login the device was enrolled
-- under, and not a reference to it: the device outlives the login, which
-- only stops what is sent to it. lists_digest is the SHA-256 digest of
-- the device's selection and cutoffs below, as the adapter encodes them:
-- a put that keeps them does not rewrite them. Deleting a user deletes
-- its devices.
CREATE TABLE push_devices (
	seq             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL UNIQUE,
	user_name       TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
	device_session  BLOB NOT NULL CHECK (length(device_session) = 32),
	subscription    BLOB NOT NULL,
	endpoint_digest BLOB NOT NULL UNIQUE CHECK (length(endpoint_digest) = 32),
	all_workspaces  INTEGER NOT NULL CHECK (all_workspaces IN (0, 1)),
	needs_answer    INTEGER NOT NULL CHECK (needs_answer IN (0, 1)),
	completed       INTEGER NOT NULL CHECK (completed IN (0, 1)),
	created_at      INTEGER,
	last_sent_at    INTEGER,
	last_ack_at     INTEGER,
	lists_digest    BLOB NOT NULL CHECK (length(lists_digest) = 32)
) STRICT;

-- Deleting a user needs this.
CREATE INDEX push_devices_by_user ON push_devices(user_name);

-- A device's explicit workspace selection, in the order given (pos). It
-- names workspaces without referencing them: the selection outlives a
-- forgotten workspace, which the Hub trims itself.
CREATE TABLE push_device_workspaces (
	device_id    TEXT NOT NULL REFERENCES push_devices(id) ON DELETE CASCADE,
	pos          INTEGER NOT NULL CHECK (pos >= 0),
	workspace_id TEXT NOT NULL,
	PRIMARY KEY (device_id, pos)
) STRICT;

-- A device's cutoffs, in the order given (pos): since when occurrences of
-- one category in one workspace count. Like the selection, they outlive
-- the workspace.
CREATE TABLE push_device_cutoffs (
	device_id    TEXT NOT NULL REFERENCES push_devices(id) ON DELETE CASCADE,
	pos          INTEGER NOT NULL CHECK (pos >= 0),
	workspace_id TEXT NOT NULL,
	category     TEXT NOT NULL,
	since        INTEGER,
	PRIMARY KEY (device_id, pos)
) STRICT;

-- The delivery journal: at most one delivery per (workspace, device,
-- notification), the unique key that also finds one. seq is the rowid, so
-- ORDER BY created_at, seq lists the oldest first and, among equals, in
-- insertion order; replacing a delivery keeps its row. The notification's
-- fields are copied in: the session that announced it keeps no history.
-- Its id is the key's notification_id; other_notification_id holds it
-- only where it differs, which no delivery the Hub makes does.
-- Deleting the workspace or the device deletes its deliveries.
CREATE TABLE push_deliveries (
	seq                     INTEGER PRIMARY KEY,
	workspace_id            TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	device_id               TEXT NOT NULL REFERENCES push_devices(id) ON DELETE CASCADE,
	notification_id         TEXT NOT NULL,
	conversation_id         TEXT NOT NULL,
	source_id               TEXT NOT NULL,
	kind                    TEXT NOT NULL,
	notification_created_at INTEGER,
	state                   TEXT NOT NULL,
	created_at              INTEGER,
	held_at                 INTEGER,
	released_at             INTEGER,
	next_at                 INTEGER,
	deadline                INTEGER,
	settled_at              INTEGER,
	attempts                INTEGER NOT NULL,
	other_notification_id   TEXT,
	UNIQUE (workspace_id, device_id, notification_id)
) STRICT;

-- The unique key leads with workspace_id; deleting a device needs this.
CREATE INDEX push_deliveries_by_device ON push_deliveries(device_id);
-- The listing's order.
CREATE INDEX push_deliveries_by_age ON push_deliveries(created_at, seq);

-- How far the Hub has read each workspace's notification feed: the
-- cursor to resume it from. Clearing one deletes its row.
CREATE TABLE notification_cursors (
	workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
	cursor       TEXT NOT NULL CHECK (cursor <> '')
) STRICT;
