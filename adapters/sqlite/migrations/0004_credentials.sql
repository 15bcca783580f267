-- The credentials family (hub.CredentialStore): each credential's record
-- with its sealed secret, their assignments to workspaces, and the tools'
-- override paths. Times are Unix nanoseconds, as in 0001.
--
-- Types, capabilities and tools are checked by the adapter on the way in
-- and on the way out (a row it cannot decode is an error, never a guess),
-- not by CHECK constraints here: SQLite cannot change a table's CHECK
-- without rebuilding it, and naming a new capability should not need a
-- migration. Only the roles are checked here, because the assignments'
-- uniqueness is built on them.

-- seq is the rowid: a new row always gets a seq above every existing one,
-- so ORDER BY seq is creation order. capabilities holds them in the order
-- given, joined by ','. sealed is the secret exactly as the key vault
-- sealed it: with its owner's passphrase, or with the Hub's own key, kept
-- outside this database. Nothing else of a secret is ever stored.
CREATE TABLE credentials (
	seq          INTEGER PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	name         TEXT NOT NULL,
	type         TEXT NOT NULL,
	capabilities TEXT NOT NULL,
	enabled      INTEGER NOT NULL CHECK (enabled IN (0, 1)),
	created_at   INTEGER NOT NULL,
	public_key   TEXT NOT NULL,
	fingerprint  TEXT NOT NULL,
	host         TEXT NOT NULL,
	username     TEXT NOT NULL,
	protected    INTEGER NOT NULL CHECK (protected IN (0, 1)),
	sealed       BLOB NOT NULL
) STRICT;

-- Two keys never share a fingerprint; a token has none ('').
CREATE UNIQUE INDEX credentials_by_fingerprint ON credentials(fingerprint) WHERE fingerprint <> '';

-- One row per place a credential can hold in a workspace: the default for
-- one host (authentication) or the signing key (host ''). The primary key
-- is that place, so at most one authentication default per workspace and
-- host and one signing default per workspace; it also orders the listing.
CREATE TABLE credential_assignments (
	workspace_id  TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
	role          TEXT NOT NULL CHECK (role IN ('authentication', 'signing')),
	host          TEXT NOT NULL,
	credential_id TEXT NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
	PRIMARY KEY (workspace_id, role, host),
	CHECK ((role = 'signing') = (host = ''))
) STRICT;

-- The primary key leads with workspace_id; deleting a credential needs this.
CREATE INDEX credential_assignments_by_credential ON credential_assignments(credential_id);

-- The absolute path of each tool whose override is set; clearing one
-- deletes its row.
CREATE TABLE credential_tool_overrides (
	tool TEXT PRIMARY KEY,
	path TEXT NOT NULL CHECK (path <> '')
) STRICT;
