package hub

import "sync"

// HubState is the Hub's summary for a client (GET /api/hub/state): one
// immutable snapshot per revision, shared by every caller until something
// it shows changes. Every Hub user sees every workspace: the contract has
// no per-user registry.
type HubState struct {
	Version              string
	HubAPIRevision       int
	WorkspaceAPIRevision int
	Workspaces           []WorkspaceView // shared and read-only
	// WorkspacesRevision identifies this snapshot: equal revisions mean
	// equal states, so what a client derives from one may be reused.
	WorkspacesRevision uint64
	// Defaults is nil when the preference cannot be resolved (the home
	// directory is unknown); the state is still served.
	Defaults *WorkspaceDefaults

	encOnce sync.Once
	enc     []byte
}

// Encoded returns encode(s), computed once per snapshot: a transport keeps
// its encoding of the state with the state, so an unchanged state is
// never encoded twice.
func (s *HubState) Encoded(encode func(*HubState) []byte) []byte {
	s.encOnce.Do(func() { s.enc = encode(s) })
	return s.enc
}

// WorkspaceView is a workspace as clients see it (HubWorkspace): the record
// plus what is true of it now.
type WorkspaceView struct {
	Workspace
	Running bool
	// CredentialRestartRequired is true while running when assignment
	// changes need a restart before the session's credentials are current.
	CredentialRestartRequired bool
	// Authentication and Signing hold the public names of the assigned
	// credentials, deduplicated, in assignment order; never nil.
	Authentication, Signing []string
	// WorkspaceAPIRevision is the revision the session speaks: the running
	// child's own, else the revision a child of this Hub would speak.
	WorkspaceAPIRevision int
	// Shells are the running session's terminals; nil when stopped or when
	// the child did not answer in time.
	Shells []Shell
	// RepositoryID identifies the Git repository holding the folder (shared
	// by a main checkout and its linked worktrees); Branch is its checked-out
	// branch. Both are empty when the folder is in no repository or git
	// could not tell.
	RepositoryID, Branch string
	// Missing is true when no directory is at Path any more.
	Missing bool
	// EndedReason says why the workspace's last session ended on its own
	// (EndReporter), while it stays stopped; "" otherwise.
	EndedReason string
	// ParentID is the workspace of the main checkout, on a linked
	// worktree whose main checkout is registered; CreateWorktree is true
	// on a main checkout that can hold linked worktrees.
	ParentID       string
	CreateWorktree bool
	// Ownership and SourceRef are a linked worktree's, as its
	// repository's inventory was last read (""  until then); Replaced is
	// true when another checkout stands where it was registered.
	Ownership WorktreeOwnership
	SourceRef string
	Replaced  bool
}

// WorkspaceDefaults is the Hub-wide preference for where new workspaces go.
// It guides create, clone and browse locations and never restricts
// registration.
type WorkspaceDefaults struct {
	// Configured is the canonical default parent, "" when none is set.
	Configured string
	// ConfiguredAvailable reports that Configured is still a directory and
	// not a symbolic link.
	ConfiguredAvailable bool
	// Effective is Configured while available, else the Hub user's home.
	Effective string
}

// WorkspaceAction is the result of a lifecycle operation on one workspace.
type WorkspaceAction struct {
	ID      string
	Running bool
	// WasRunning is set by stop: whether the session was running.
	WasRunning *bool
	// Forgotten is set by forget.
	Forgotten bool
	// RecoveryRequired is set by the legacy registration when the
	// registration committed but its journal could not be cleared.
	RecoveryRequired string
}

// AuthenticationSelection picks a credential as the authentication default
// for one Git host.
type AuthenticationSelection struct {
	CredentialID string
	Host         string
	// Policy is the assignment's use policy: "" keeps the one in effect
	// for the same credential, else PolicyAlways.
	Policy UsePolicy
}

// RegisterRequest is the legacy registration of an existing folder.
type RegisterRequest struct {
	Path string
	// Backend names the machine Path is on: "" or LocalBackend for the
	// Hub's own, HostBackend(name) for a configured host.
	Backend string
	Init    bool // confirms `git init` of a folder that is not a repository
	Start   bool // the caller decides the default (the contract's is true)
}

// ConfigureRequest registers an existing folder with its display name and
// credential selections.
type ConfigureRequest struct {
	Path           string
	Backend        string // as RegisterRequest's
	DisplayName    string
	Authentication []AuthenticationSelection
	Signing        string // a credential id, or ""
	Init           bool
	Start          bool
}

// CreateConfiguredRequest creates a new folder, initializes a repository in
// it and registers it.
type CreateConfiguredRequest struct {
	Parent         string
	Backend        string // as RegisterRequest's
	FolderName     string
	DisplayName    string
	Authentication []AuthenticationSelection
	Signing        string
	Start          bool
}

// OnboardingResult is the outcome of configure and create.
type OnboardingResult struct {
	Workspace WorkspaceView
	Started   bool
	// StartError says why an explicitly requested start failed; "" when no
	// start was requested or it succeeded.
	StartError string
	// RecoveryRequired is set when the registration committed but its
	// journal could not be cleared; no start was attempted.
	RecoveryRequired string
}
