package hub

import "time"

// The clone-jobs family's records: a job that clones a repository into a
// new folder with a Hub-held credential, registers it as a workspace and
// optionally starts it, while its owner follows git's output and answers
// its prompts. The rules (URLs, folder names, the event log, the output
// normaliser) are package hub/clone's; running git is the GitRunner's.

// ClonePhase is where a running clone job is.
type ClonePhase string

// The phases, in order.
const (
	PhaseCloning     ClonePhase = "cloning"
	PhaseRegistering ClonePhase = "registering"
	PhaseStarting    ClonePhase = "starting"
)

// CloneStatus is how a clone job ended.
type CloneStatus string

// The result statuses.
const (
	CloneSucceeded      CloneStatus = "succeeded"
	CloneFailed         CloneStatus = "clone-failed"
	CloneRegisterFailed CloneStatus = "register-failed"
	CloneStartFailed    CloneStatus = "start-failed"
	CloneCleanupFailed  CloneStatus = "cleanup-failed"
	CloneCancelled      CloneStatus = "cancelled"
	CloneTimedOut       CloneStatus = "timed-out"
)

// The reasons of a timed-out (or cancelled) job.
const (
	CloneReasonInactivity = "inactivity"
	CloneReasonLifetime   = "lifetime"
)

// CloneResult is a job's end.
type CloneResult struct {
	Status CloneStatus
	// Target is the folder the clone was to make.
	Target string
	// WorkspaceID is the registered workspace: on success, and on
	// start-failed when the stopped workspace was kept.
	WorkspaceID string
	// Running says a requested start succeeded (succeeded only).
	Running bool
	// Error says why it failed, for people, never a secret (the *-failed
	// statuses).
	Error string
	// Reason is CloneReasonInactivity or CloneReasonLifetime for a job
	// that timed out.
	Reason string
}

// CreateCloneJobRequest asks for a clone job (hubCreateCloneJob).
type CreateCloneJobRequest struct {
	URL string
	// Dest is the existing absolute folder the clone's folder is made in.
	Dest string
	// FolderName is the new folder's name; "" derives it from the URL.
	FolderName string
	// DisplayName is the workspace's; "" is the folder's name.
	DisplayName string
	// CredentialID is the credential the clone authenticates with; ""
	// for none.
	CredentialID string
	// RetainedAuthentication and Signing are the new workspace's
	// credential selections, as a configured registration's.
	RetainedAuthentication []AuthenticationSelection
	Signing                string
	Start                  bool
	// RetainAssignment (legacy) keeps CredentialID as the workspace's
	// authentication default for the clone's host once registered.
	RetainAssignment bool
	// Backend is where Dest is, and so where git runs and the workspace
	// lives (a Wharf extension): "" and LocalBackend are the Hub's
	// machine, HostBackend(name) a configured host.
	Backend string
}

// CloneEvent is one event of a job's channel, numbered from 1.
type CloneEvent struct {
	ID int64
	// Exactly one of Output, Phase and Result is set.
	Output string
	Phase  ClonePhase
	Result *CloneResult
	At     time.Time
}
