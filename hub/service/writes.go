package service

import (
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// writes is the transaction a mutation writes through (commit.go). It
// offers the store's reads as they are and its writes recorded: each
// write that succeeds records the change it makes, so the commit path
// acts on exactly what was written. It does not embed hub.Tx on purpose:
// a write a family adds to the store is not reachable here until a method
// below states its consequence.
type writes struct {
	tx      hub.Tx
	changes []change
}

func (w *writes) record(c change) { w.changes = append(w.changes, c) }

// reads are the reads of the store that the helpers of mutations need;
// both a View's hub.Tx and writes offer them.
type reads interface {
	Workspaces() ([]hub.Workspace, error)
	Workspace(id string) (hub.Workspace, error)
	WorkspaceIDUsed(id string) (bool, error)
}

// settings is the read of Hub-wide settings.
type settings interface {
	Setting(key string) (string, bool, error)
}

// Reads, as the store answers them.

func (w *writes) User(name string) (hub.User, error) { return w.tx.User(name) }
func (w *writes) Users() ([]hub.User, error)         { return w.tx.Users() }
func (w *writes) CountUsers() (int, error)           { return w.tx.CountUsers() }
func (w *writes) DeviceSessionByDigest(d hub.DeviceSessionDigest) (hub.DeviceSession, error) {
	return w.tx.DeviceSessionByDigest(d)
}
func (w *writes) ActiveDeviceSessions(now time.Time) ([]hub.DeviceSession, error) {
	return w.tx.ActiveDeviceSessions(now)
}
func (w *writes) DeviceSessionsOfUser(name string) ([]hub.DeviceSession, error) {
	return w.tx.DeviceSessionsOfUser(name)
}
func (w *writes) Workspaces() ([]hub.Workspace, error)       { return w.tx.Workspaces() }
func (w *writes) Workspace(id string) (hub.Workspace, error) { return w.tx.Workspace(id) }
func (w *writes) WorkspaceIDUsed(id string) (bool, error)    { return w.tx.WorkspaceIDUsed(id) }
func (w *writes) Journals() ([]hub.Journal, error)           { return w.tx.Journals() }
func (w *writes) ActivityMarks() ([]hub.ActivityMark, error) { return w.tx.ActivityMarks() }
func (w *writes) Setting(key string) (string, bool, error)   { return w.tx.Setting(key) }
func (w *writes) PersonalState(user, id string) (hub.PersonalState, error) {
	return w.tx.PersonalState(user, id)
}

// Writes, each recording its consequence.

// CreateUser adds a user: nothing the Hub keeps in memory depends on
// users (their device sessions do, and their own writes say so).
func (w *writes) CreateUser(u hub.User) error {
	return w.did(w.tx.CreateUser(u), storedOnly{})
}

// SetPasswordHash changes a user's password hash; ending the user's
// sessions is a write of its own (DeleteDeviceSessionsOfUser).
func (w *writes) SetPasswordHash(name, hash string) error {
	return w.did(w.tx.SetPasswordHash(name, hash), storedOnly{})
}

// DeleteUser removes a user and, with it, every device session it had.
func (w *writes) DeleteUser(name string) error {
	if err := w.did(w.tx.DeleteUser(name), userSignedOut{user: name}); err != nil {
		return err
	}
	w.record(pushUserLeft{user: name})
	return nil
}

func (w *writes) CreateDeviceSession(s hub.DeviceSession) error {
	return w.did(w.tx.CreateDeviceSession(s), deviceSessionCreated{session: s})
}

func (w *writes) RevokeDeviceSession(d hub.DeviceSessionDigest, at time.Time) error {
	return w.did(w.tx.RevokeDeviceSession(d, at), deviceSessionRevoked{digest: d})
}

func (w *writes) DeleteDeviceSessionsOfUser(name string) (int, error) {
	n, err := w.tx.DeleteDeviceSessionsOfUser(name)
	return n, w.did(err, userSignedOut{user: name})
}

func (w *writes) DeleteExpiredDeviceSessions(now time.Time) (int, error) {
	n, err := w.tx.DeleteExpiredDeviceSessions(now)
	return n, w.did(err, deviceSessionsExpired{at: now})
}

func (w *writes) CreateWorkspace(ws hub.Workspace) error {
	if err := w.did(w.tx.CreateWorkspace(ws), &workspaceSaved{w: ws, created: true}); err != nil {
		return err
	}
	w.record(pushWorkspaceJoined{})
	return nil
}

func (w *writes) UpdateWorkspace(ws hub.Workspace) error {
	return w.did(w.tx.UpdateWorkspace(ws), &workspaceSaved{w: ws})
}

// DeleteWorkspace records the record the workspace had, read in the same
// transaction: its path is what the consequences need.
func (w *writes) DeleteWorkspace(id string) error {
	old, err := w.tx.Workspace(id)
	if err != nil {
		return err
	}
	if err := w.did(w.tx.DeleteWorkspace(id), &workspaceDeleted{w: old}, pushWorkspaceLeft{ws: id}); err != nil {
		return err
	}
	w.record(workspaceAssignmentsGone{id: id}) // the store deletes them with it
	return nil
}

// AddJournal writes a recovery journal: the Hub's fences follow the
// journals it holds itself (journal.go), not this write.
func (w *writes) AddJournal(j hub.Journal) (int64, error) {
	id, err := w.tx.AddJournal(j)
	return id, w.did(err, storedOnly{})
}

func (w *writes) DeleteJournal(id int64) error {
	return w.did(w.tx.DeleteJournal(id), storedOnly{})
}

// PutPersonalState stores a user's personal state, which the Hub answers
// from the store and keeps nowhere else.
func (w *writes) PutPersonalState(user, id string, st hub.PersonalState) error {
	return w.did(w.tx.PutPersonalState(user, id, st), storedOnly{})
}

// The activity marks are changed in memory, and published, by the live
// broker before it persists them through live.Host's CommitMarks
// (livehost.go): their writes have no further consequence. writes
// satisfies live.MarkWrites.

func (w *writes) PutActivityMark(m hub.ActivityMark) error {
	return w.did(w.tx.PutActivityMark(m), storedOnly{})
}

func (w *writes) DeleteActivityMark(id, user string) error {
	return w.did(w.tx.DeleteActivityMark(id, user), storedOnly{})
}

func (w *writes) DeleteActivityMarks(id string) error {
	return w.did(w.tx.DeleteActivityMarks(id), storedOnly{})
}

func (w *writes) PutSetting(key, value string) error {
	return w.did(w.tx.PutSetting(key, value), settingSaved{key: key, value: value, set: true})
}

func (w *writes) DeleteSetting(key string) error {
	return w.did(w.tx.DeleteSetting(key), settingSaved{key: key})
}

// The credentials family's writes (changes_credential.go).

func (w *writes) Credentials() ([]hub.Credential, error)       { return w.tx.Credentials() }
func (w *writes) Credential(id string) (hub.Credential, error) { return w.tx.Credential(id) }
func (w *writes) CredentialSecret(id string) ([]byte, error)   { return w.tx.CredentialSecret(id) }
func (w *writes) CredentialAssignments() ([]hub.CredentialAssignment, error) {
	return w.tx.CredentialAssignments()
}

// CreateCredential records c with its sealed secret; a token's digest
// joins the cache, for the sessions' revisions.
func (w *writes) CreateCredential(c hub.Credential, sealed []byte) error {
	saved := credentialSaved{c: c}
	if c.Type == hub.CredentialToken {
		d := credential.DigestSeal(sealed)
		saved.digest = &d
	}
	return w.did(w.tx.CreateCredential(c, sealed), saved)
}

func (w *writes) UpdateCredential(c hub.Credential) error {
	return w.did(w.tx.UpdateCredential(c), credentialSaved{c: c})
}

func (w *writes) DeleteCredential(id string) error {
	return w.did(w.tx.DeleteCredential(id), credentialDeleted{id: id})
}

func (w *writes) PutCredentialAssignment(a hub.CredentialAssignment) error {
	return w.did(w.tx.PutCredentialAssignment(a), assignmentPut{a: a})
}

func (w *writes) DeleteCredentialAssignment(a hub.CredentialAssignment) (bool, error) {
	ok, err := w.tx.DeleteCredentialAssignment(a)
	if err == nil && ok {
		w.record(assignmentRemoved{a: a})
	}
	return ok, err
}

func (w *writes) PutCredentialToolOverride(tool hub.CredentialToolName, path string) error {
	return w.did(w.tx.PutCredentialToolOverride(tool, path), toolOverrideSaved{tool: tool, path: path})
}

// PutWorktreeProvenance records that the Hub made (or registered and
// stamped) a tree of main's repository.
func (w *writes) PutWorktreeProvenance(p hub.WorktreeProvenance, main hub.Workspace) error {
	return w.did(w.tx.PutWorktreeProvenance(p), worktreeChanged{main: main})
}

// DeleteWorktreeProvenance forgets that the Hub made a tree of main's
// repository (its files are gone).
func (w *writes) DeleteWorktreeProvenance(checkoutID string, main hub.Workspace) error {
	return w.did(w.tx.DeleteWorktreeProvenance(checkoutID), worktreeChanged{main: main})
}

// did records c when the write it follows succeeded, and returns the
// write's error.
func (w *writes) did(err error, cs ...change) error {
	if err == nil {
		for _, c := range cs {
			w.record(c)
		}
	}
	return err
}

// Hosts: nothing in memory depends on their records (a connected host is
// looked up in the store at each use, and its connection dropped by the
// operation that removes it).

func (w *writes) Hosts() ([]hub.Host, error)         { return w.tx.Hosts() }
func (w *writes) Host(name string) (hub.Host, error) { return w.tx.Host(name) }
func (w *writes) CreateHost(h hub.Host) error        { return w.did(w.tx.CreateHost(h), storedOnly{}) }
func (w *writes) DeleteHost(name string) error       { return w.did(w.tx.DeleteHost(name), storedOnly{}) }
