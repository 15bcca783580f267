-- The workspace registry, recovery journals, per-user workspace records and
-- Hub-wide settings. Times are Unix nanoseconds, as in 0001.

-- Every workspace id ever given. Rows are never deleted: an id is never
-- reused, even after its workspace is forgotten.
CREATE TABLE workspace_ids (
	id TEXT PRIMARY KEY
) STRICT;

-- Registered workspaces. seq is the rowid; a new row always gets a seq above
-- every existing one, so ORDER BY seq is registration order.
CREATE TABLE workspaces (
	seq           INTEGER PRIMARY KEY,
	id            TEXT NOT NULL UNIQUE REFERENCES workspace_ids(id),
	path          TEXT NOT NULL UNIQUE,
	display_name  TEXT NOT NULL,
	backend       TEXT NOT NULL,
	auto_start    INTEGER NOT NULL CHECK (auto_start IN (0, 1)),
	registered_at INTEGER NOT NULL
) STRICT;

-- AUTOINCREMENT keeps the highest id ever given in sqlite_sequence, so an id
-- is not given again even after the newest journal is deleted.
CREATE TABLE journals (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	kind       TEXT NOT NULL,
	data       BLOB NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;

-- One user's personal state in one workspace. A NULL column is an unset
-- field; follow is 0 or 1 when set.
CREATE TABLE personal_states (
	user_name      TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
	workspace_id   TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	document_path  TEXT,
	follow         INTEGER CHECK (follow IN (0, 1)),
	preview_mode   TEXT,
	compare_target TEXT,
	files_filter   TEXT,
	last_pty_id    TEXT,
	PRIMARY KEY (user_name, workspace_id)
) STRICT;

-- When one user last viewed one workspace's activity.
CREATE TABLE activity_views (
	user_name    TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
	workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	viewed_at    INTEGER NOT NULL,
	PRIMARY KEY (user_name, workspace_id)
) STRICT;

-- The primary keys lead with user_name; deleting a workspace needs these.
CREATE INDEX personal_states_by_workspace ON personal_states(workspace_id);
CREATE INDEX activity_views_by_workspace ON activity_views(workspace_id);

CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
