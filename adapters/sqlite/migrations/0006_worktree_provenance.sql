-- The provenance records of the linked trees the Hub made or registered
-- and stamped (hub.WorktreeStore): a record is what makes a tree's
-- ownership "wharf". It names no workspace: forgetting the workspace
-- registered for a tree keeps its record, and registering the tree again
-- recovers its ownership.
CREATE TABLE worktree_provenance (
	checkout_id   TEXT PRIMARY KEY CHECK (length(checkout_id) = 32),
	repository_id TEXT NOT NULL CHECK (length(repository_id) = 32),
	path          TEXT NOT NULL,
	source_ref    TEXT NOT NULL,
	created_by    TEXT NOT NULL,
	created_at    INTEGER NOT NULL
) STRICT;

CREATE INDEX worktree_provenance_by_repository ON worktree_provenance(repository_id, checkout_id);
