package hub

import (
	"context"
	"time"
)

// The persistence port: the Store and the role interfaces its
// transactions are assembled from, one per family of records. Adapters
// implement the ports of these files; fakes implement them
// deterministically; fakes/porttest holds one conformance suite per port
// that both must pass.

// Store persists the Hub's records. It is a unit-of-work pair in the style of
// bbolt: a closure receives a Tx and the work commits only when the closure
// returns nil.
//
// Contract:
//   - Update runs fn in a write transaction. If fn returns nil the changes
//     commit atomically and durably before Update returns; if fn returns an
//     error (or panics, or ends its goroutine with runtime.Goexit as
//     t.FailNow does) nothing fn did is kept, the store is free for the
//     next Update, and Update returns fn's error unchanged. Updates are
//     serialized: no two overlap.
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
	// ExternalGeneration returns a number that changes once another
	// Store sharing the same records (another process: `wharf user`
	// beside a running daemon) has committed an Update, and only then:
	// this Store's own commits leave it as it is. A change is visible
	// here before the other Store's Update returns. It costs no I/O, so
	// the Hub checks it per request to know whether what it keeps in
	// memory of the records (active device sessions) is still current.
	// The value is opaque: compare it only for equality.
	ExternalGeneration() uint64
	// Close releases the store. Calls after Close fail.
	Close() error
}

// Tx is the view of the store inside one unit of work. It is assembled from
// role interfaces, one per family of records.
type Tx interface {
	UserStore
	DeviceSessionStore
	WorkspaceStore
	JournalStore
	PersonalStateStore
	ActivityStore
	SettingStore
	CredentialStore
	WorktreeStore
	NotificationStore
	HostStore
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

// DeviceSessionStore holds device sessions. A session is found by the SHA-256
// digest of its secret id; the secret itself is never stored.
type DeviceSessionStore interface {
	// CreateDeviceSession adds s. Its user must exist (NotFound otherwise); a
	// session with the same digest or handle is a Conflict error.
	CreateDeviceSession(s DeviceSession) error
	// DeviceSessionByDigest returns the session with this digest, revoked and
	// expired ones included, or a NotFound error.
	DeviceSessionByDigest(d DeviceSessionDigest) (DeviceSession, error)
	// ActiveDeviceSessions returns every session neither revoked nor
	// expired at now, in no particular order.
	ActiveDeviceSessions(now time.Time) ([]DeviceSession, error)
	// DeviceSessionsOfUser returns every stored session of the named user, revoked
	// and expired ones included, newest IssuedAt first.
	DeviceSessionsOfUser(name string) ([]DeviceSession, error)
	// RevokeDeviceSession marks the session revoked at the given time. Revoking an
	// already revoked session keeps its first revocation time. NotFound if no
	// session has this digest.
	RevokeDeviceSession(d DeviceSessionDigest, at time.Time) error
	// DeleteDeviceSessionsOfUser removes every session of the named user and
	// reports how many were removed.
	DeleteDeviceSessionsOfUser(name string) (int, error)
	// DeleteExpiredDeviceSessions removes every session whose ExpiresAt is at or
	// before now and reports how many were removed.
	DeleteExpiredDeviceSessions(now time.Time) (int, error)
}

// WorkspaceStore is the workspace registry. Returned values are copies owned
// by the caller.
type WorkspaceStore interface {
	// Workspaces returns every registered workspace in registration order.
	Workspaces() ([]Workspace, error)
	// Workspace returns the workspace with this id, or a NotFound error.
	Workspace(id string) (Workspace, error)
	// WorkspaceIDUsed reports whether id was ever given to a workspace,
	// including one since forgotten: ids are never reused.
	WorkspaceIDUsed(id string) (bool, error)
	// CreateWorkspace registers w after every existing workspace. An id that
	// was ever used, or a path another workspace on the same backend holds
	// (paths are unique per machine), is a Conflict error.
	CreateWorkspace(w Workspace) error
	// UpdateWorkspace replaces the stored path, display name and AutoStart
	// of the workspace with w's id (NotFound if absent); its position and id
	// never change, nor does its backend. A path another workspace on the
	// same backend holds is a Conflict error.
	UpdateWorkspace(w Workspace) error
	// DeleteWorkspace unregisters the workspace (NotFound if absent) and,
	// in the same transaction, deletes every user's personal state and
	// activity view of it. Its id stays used.
	DeleteWorkspace(id string) error
}

// JournalStore holds recovery journals: the intent of a change to folders
// on disk, written before the disk is touched and deleted once the change
// and the registry agree. The payload is opaque to the store.
type JournalStore interface {
	// Journals returns every pending journal, oldest (lowest ID) first.
	Journals() ([]Journal, error)
	// AddJournal stores j (its ID is ignored) and returns the ID it was
	// given; IDs increase and are never reused.
	AddJournal(j Journal) (int64, error)
	// DeleteJournal removes the journal with this ID (NotFound if absent).
	DeleteJournal(id int64) error
}

// PersonalStateStore holds each user's personal state in each workspace
// (the activity acknowledgements live in ActivityStore). Writes need the
// user and the workspace to exist (NotFound otherwise); reads of an absent
// state, for whatever reason, return the zero value. Deleting a user or a
// workspace deletes its states.
type PersonalStateStore interface {
	// PersonalState returns the stored state of user in workspace, or the
	// zero PersonalState when none is stored.
	PersonalState(user, workspaceID string) (PersonalState, error)
	// PutPersonalState replaces the stored state of user in workspace.
	PutPersonalState(user, workspaceID string, st PersonalState) error
}

// ActivityStore holds the marks behind the activity topic's per-user
// `finished` flag: when each workspace was last seen finishing work, and
// when each user last acknowledged it. Marks are stamps of one counter the
// Hub keeps, never wall-clock times, so they survive a restart in order.
// Deleting a user deletes its view marks; deleting a workspace deletes
// every mark of it.
type ActivityStore interface {
	// ActivityMarks returns every stored mark, in no particular order.
	ActivityMarks() ([]ActivityMark, error)
	// PutActivityMark stores m, replacing the mark of the same workspace
	// and user. The workspace, and for a view mark the user, must exist
	// (NotFound otherwise).
	PutActivityMark(m ActivityMark) error
	// DeleteActivityMark removes the mark of the workspace and user (""
	// for the finish mark); removing an absent mark is not an error.
	DeleteActivityMark(workspaceID, user string) error
	// DeleteActivityMarks removes every mark of the workspace.
	DeleteActivityMarks(workspaceID string) error
}

// ActivityMark is one stored mark: a workspace's finish (User "") or one
// user's acknowledgement of it.
type ActivityMark struct {
	WorkspaceID string
	User        string
	Stamp       uint64
}

// SettingStore holds Hub-wide settings as text under fixed keys.
type SettingStore interface {
	// Setting returns the value under key and whether one is stored.
	Setting(key string) (string, bool, error)
	// PutSetting stores value under key, replacing any earlier value.
	PutSetting(key, value string) error
	// DeleteSetting removes key; removing an absent key is not an error.
	DeleteSetting(key string) error
}

// CredentialStore holds the credentials: each record with its sealed
// secret (KeyVault), their assignments to workspaces, and the tools'
// override paths. Returned values are copies owned by the caller.
//
// The store keeps only what the records name: a type, capability, role or
// tool outside CredentialTypes, Capabilities, CredentialRoles and
// CredentialTools, an assignment's policy outside UsePolicies, a
// capability listed twice, a signing assignment with a
// host or an authentication one without, is refused as an Internal error
// and stores nothing (the rules of hub/credential let none through, and
// the store could not read it back); a stored row that does not decode
// as one of them is an Internal error too, never a guess.
type CredentialStore interface {
	// Credentials returns every credential, in creation order.
	Credentials() ([]Credential, error)
	// Credential returns the credential id, or a NotFound error.
	Credential(id string) (Credential, error)
	// CredentialSecret returns credential id's sealed secret, or a
	// NotFound error.
	CredentialSecret(id string) ([]byte, error)
	// CreateCredential adds c, its capabilities in the order given, with
	// its sealed secret. An id in use, or a key whose fingerprint another
	// credential has, is a Conflict error; an empty fingerprint (a
	// token's) is no key's and conflicts with none.
	CreateCredential(c Credential, sealed []byte) error
	// UpdateCredential replaces what may change of credential c.ID: its
	// name and whether it is enabled. NotFound when there is none.
	UpdateCredential(c Credential) error
	// DeleteCredential removes credential id, its secret and its
	// assignments. NotFound when there is none.
	DeleteCredential(id string) error

	// CredentialAssignments returns every assignment, ordered by
	// workspace id, then role, then host, each compared byte by byte.
	CredentialAssignments() ([]CredentialAssignment, error)
	// PutCredentialAssignment records a with its policy, replacing the
	// assignment that held its place: the workspace's default for a.Host
	// (authentication) or its signing default. The workspace and the credential must exist
	// (NotFound otherwise). Deleting a workspace deletes its assignments.
	PutCredentialAssignment(a CredentialAssignment) error
	// DeleteCredentialAssignment removes a (the same workspace, role,
	// credential and host, whatever its policy), reporting whether it was
	// there.
	DeleteCredentialAssignment(a CredentialAssignment) (bool, error)

	// CredentialToolOverrides returns the override path of each tool that
	// has one, in a map the caller owns (empty when none has).
	CredentialToolOverrides() (map[CredentialToolName]string, error)
	// PutCredentialToolOverride sets tool's override path; "" clears it,
	// and clearing a tool without one is not an error.
	PutCredentialToolOverride(tool CredentialToolName, path string) error
}

// WorktreeStore holds the provenance records of the linked trees the Hub
// made or registered and stamped: a record is what makes a tree's
// ownership "wharf". Records outlive the workspace registered for the
// tree (forgetting it keeps its provenance); deleting the tree deletes
// its record. Returned values are copies owned by the caller.
type WorktreeStore interface {
	// WorktreeProvenances returns the records of the repository, sorted
	// by checkout id.
	WorktreeProvenances(repositoryID string) ([]WorktreeProvenance, error)
	// PutWorktreeProvenance stores p (CheckWorktreeProvenance first),
	// replacing the record of the same checkout.
	PutWorktreeProvenance(p WorktreeProvenance) error
	// DeleteWorktreeProvenance removes the checkout's record; removing an
	// absent record is not an error.
	DeleteWorktreeProvenance(checkoutID string) error
}
