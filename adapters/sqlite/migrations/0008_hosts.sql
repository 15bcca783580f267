-- wharf: rebuilds tables
-- The hosts: other machines workspaces live on (hub.HostStore), and paths
-- unique per machine rather than across all of them.

CREATE TABLE hosts (
	name        TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 32),
	destination TEXT NOT NULL CHECK (length(destination) BETWEEN 1 AND 255),
	added_at    INTEGER NOT NULL
) STRICT;

-- A workspace's path is a path on its backend's machine: the same path
-- may be registered on two machines. SQLite cannot change a column's
-- UNIQUE constraint in place, so the table is rebuilt (the migration runs
-- with foreign keys off, so the rows that reference workspaces keep
-- pointing at the same ids, and checks them before it commits).
CREATE TABLE workspaces_new (
	seq           INTEGER PRIMARY KEY,
	id            TEXT NOT NULL UNIQUE REFERENCES workspace_ids(id),
	path          TEXT NOT NULL,
	display_name  TEXT NOT NULL,
	backend       TEXT NOT NULL,
	auto_start    INTEGER NOT NULL CHECK (auto_start IN (0, 1)),
	registered_at INTEGER NOT NULL,
	UNIQUE (backend, path)
) STRICT;

INSERT INTO workspaces_new (seq, id, path, display_name, backend, auto_start, registered_at)
	SELECT seq, id, path, display_name, backend, auto_start, registered_at FROM workspaces;
DROP TABLE workspaces;
ALTER TABLE workspaces_new RENAME TO workspaces;
