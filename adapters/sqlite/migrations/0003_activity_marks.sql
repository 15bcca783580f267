-- The marks behind the activity topic's per-user `finished` flag
-- (hub.ActivityStore). A stamp is a value of one counter the Hub keeps, not
-- a time. Stamps are unsigned 64-bit in Go and stored as INTEGER, which is
-- signed: the adapter refuses a stamp above 2^63-1 instead of letting it
-- wrap negative, and the CHECK keeps a negative one from ever being read.

-- When each workspace was last seen finishing work. Its primary key also
-- serves deletes by workspace.
CREATE TABLE activity_finishes (
	workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
	stamp        INTEGER NOT NULL CHECK (stamp >= 0)
) STRICT;

-- When each user last acknowledged each workspace's finish.
CREATE TABLE activity_view_marks (
	user_name    TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
	workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	stamp        INTEGER NOT NULL CHECK (stamp >= 0),
	PRIMARY KEY (user_name, workspace_id)
) STRICT;

-- The primary key leads with user_name; deleting a workspace needs this.
CREATE INDEX activity_view_marks_by_workspace ON activity_view_marks(workspace_id);

-- These marks replace 0002's activity views. Their rows are not carried
-- over: a view's wall-clock time has no place in the stamps' order.
DROP INDEX activity_views_by_workspace;
DROP TABLE activity_views;
