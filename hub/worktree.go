package hub

import (
	"path"
	"time"
)

// The worktree family's records: the checkouts of a workspace's
// repository (its main checkout and its linked Git worktrees), each of
// which can be registered as a workspace of its own, so one agent works
// per task on its own branch. The rules (branch names, destinations,
// identities, the local-data fingerprint, references, the order of
// blockers, sanitized messages) are package hub/worktree's; running git
// is the GitRunner's (ports_git.go).

// WorktreeOwnership says who made a checkout, as far as the Hub can
// prove: never inferred from a path or a name.
type WorktreeOwnership string

// The ownerships.
const (
	// OwnedMain is the repository's main checkout.
	OwnedMain WorktreeOwnership = "main"
	// OwnedByWharf is a linked tree the Hub created, or registered and
	// stamped, and holds a provenance record of.
	OwnedByWharf WorktreeOwnership = "wharf"
	// OwnedExternal is a linked tree the Hub holds no record of.
	OwnedExternal WorktreeOwnership = "external"
	// OwnedUncertain is a tree whose identity could not be confirmed.
	OwnedUncertain WorktreeOwnership = "uncertain"
)

// WorktreeAvailability says whether a registered linked tree is still
// where it was registered.
type WorktreeAvailability string

// The availabilities.
const (
	WTPresent  WorktreeAvailability = "present"
	WTMissing  WorktreeAvailability = "missing"  // nothing is at the path
	WTReplaced WorktreeAvailability = "replaced" // another checkout is there
)

// WorktreeCheckout is one checkout in a repository's inventory.
type WorktreeCheckout struct {
	// CheckoutID is stable for the tree's life: from its git directory
	// and, for a stamped tree, the stamp the Hub wrote into it.
	CheckoutID   string
	RepositoryID string
	// WorkspaceID is the workspace registered for it, "" when none;
	// ParentWorkspaceID the main checkout's workspace, on a registered
	// linked tree.
	WorkspaceID, ParentWorkspaceID string
	// Path is the tree's absolute folder.
	Path string
	// Branch is the checked-out branch's short name, "" when detached.
	Branch       string
	Detached     bool
	Main         bool
	Ownership    WorktreeOwnership
	Availability WorktreeAvailability
	Registered   bool
	Running      bool
	// Locked is git's `worktree lock`.
	Locked bool
	// SourceRef is the ref a Hub-created tree was made from, as chosen
	// (a remote-qualified spelling included); "" otherwise.
	SourceRef string
	// Head is the short commit checked out, for diagnostics.
	Head string
}

// WorktreeRefs are the branches a new tree can be made from.
type WorktreeRefs struct {
	Local  []string // "main", "feature/x"
	Remote []string // "origin/main"
	// FetchedAt is when a fetch through the Hub last succeeded (Unix
	// milliseconds), 0 when none has since the Hub started.
	FetchedAt int64
}

// WorktreeInventoryStatus says whether an inventory could be read.
type WorktreeInventoryStatus string

// The inventory statuses.
const (
	InventoryReady WorktreeInventoryStatus = "ready"
	InventoryError WorktreeInventoryStatus = "error"
)

// UnknownRepository is the repository id of an inventory whose
// repository could not be identified.
const UnknownRepository = "unknown"

// WorktreeInventory is every checkout of a workspace's repository.
type WorktreeInventory struct {
	RepositoryID      string
	SourceWorkspaceID string
	Status            WorktreeInventoryStatus
	Checkouts         []WorktreeCheckout
	Refs              WorktreeRefs
	// Error says why Status is InventoryError.
	Error *WorktreeError
}

// WorktreeCode is a worktree refusal's kind: a closed set, answered as
// HTTP 200 with ok false.
type WorktreeCode string

// The refusal codes.
const (
	WTInvalidInput            WorktreeCode = "invalid-input"
	WTGitUnsupported          WorktreeCode = "git-unsupported"
	WTNotFound                WorktreeCode = "not-found"
	WTBranchExists            WorktreeCode = "branch-exists"
	WTBranchInUse             WorktreeCode = "branch-in-use"
	WTDestinationOccupied     WorktreeCode = "destination-occupied"
	WTRefUnavailable          WorktreeCode = "ref-unavailable"
	WTFetchAuthentication     WorktreeCode = "fetch-authentication"
	WTFetchNetwork            WorktreeCode = "fetch-network"
	WTRegistrationFailed      WorktreeCode = "registration-failed"
	WTStartFailed             WorktreeCode = "start-failed"
	WTLocalData               WorktreeCode = "local-data"
	WTGitLock                 WorktreeCode = "git-lock"
	WTExternalActivity        WorktreeCode = "external-activity"
	WTNestedDependency        WorktreeCode = "nested-dependency"
	WTStopFailed              WorktreeCode = "stop-failed"
	WTOwnershipRequired       WorktreeCode = "ownership-required"
	WTIdentityUncertain       WorktreeCode = "identity-uncertain"
	WTInventoryUnavailable    WorktreeCode = "inventory-unavailable"
	WTFolderDependency        WorktreeCode = "folder-dependency"
	WTFolderDependencyUnknown WorktreeCode = "folder-dependency-unknown"
	WTConflict                WorktreeCode = "conflict"
	WTPermissionDenied        WorktreeCode = "permission-denied"
	WTTimeout                 WorktreeCode = "timeout"
	WTCancelled               WorktreeCode = "cancelled"
	WTInternal                WorktreeCode = "internal"
)

// WorktreeRetry is what a client may do after a refusal.
type WorktreeRetry string

// The retry actions.
const (
	WTRetryNone         WorktreeRetry = "none"
	WTRetryRegistration WorktreeRetry = "retry-registration"
	WTRetryStart        WorktreeRetry = "retry-start"
	WTRetryFetch        WorktreeRetry = "retry-fetch"
	WTRetryDelete       WorktreeRetry = "retry-delete"
	WTRetryRefresh      WorktreeRetry = "refresh"
	WTRetryOpenExisting WorktreeRetry = "open-existing"
)

// WorktreeError is a worktree operation's refusal. It is an error, so
// the rules and ports can return it; its Message is sanitized
// (hub/worktree.Sanitize) before it reaches a client.
type WorktreeError struct {
	Code    WorktreeCode
	Message string
	Retry   WorktreeRetry
	// ConflictCheckoutID names the checkout in the way (branch-in-use,
	// an unregistered tree); RetainedCheckoutID the tree a failed create
	// kept.
	ConflictCheckoutID, RetainedCheckoutID string
	// Phase is where an operation with phases stopped.
	Phase WorktreePhase
}

func (e *WorktreeError) Error() string { return string(e.Code) + ": " + e.Message }

// WorktreeRefusal returns a refusal with retry none.
func WorktreeRefusal(code WorktreeCode, msg string) *WorktreeError {
	return &WorktreeError{Code: code, Message: msg, Retry: WTRetryNone}
}

// WithRetry returns e with retry r.
func (e *WorktreeError) WithRetry(r WorktreeRetry) *WorktreeError {
	c := *e
	c.Retry = r
	return &c
}

// WorktreeKind names the operation a result reports.
type WorktreeKind string

// The result kinds.
const (
	WTOpCreate   WorktreeKind = "create"
	WTOpRegister WorktreeKind = "register"
	WTOpStart    WorktreeKind = "start"
	WTOpFetch    WorktreeKind = "fetch"
	WTOpRefresh  WorktreeKind = "refresh"
	WTOpDelete   WorktreeKind = "delete"
	WTOpForget   WorktreeKind = "forget"
)

// WorktreePhase is how far a create or a delete went; phases only move
// forward, and an unphased operation reports only WTPhaseComplete.
type WorktreePhase string

// The phases of create, then of delete, in order.
const (
	WTPhaseValidating  WorktreePhase = "validating"
	WTPhaseReserving   WorktreePhase = "reserving"
	WTPhaseCreating    WorktreePhase = "creating"
	WTPhaseVerifying   WorktreePhase = "verifying"
	WTPhaseRegistering WorktreePhase = "registering"
	WTPhaseAssigning   WorktreePhase = "assigning"
	WTPhaseStarting    WorktreePhase = "starting"
	WTPhaseComplete    WorktreePhase = "complete"

	WTPhasePreflight     WorktreePhase = "preflight"
	WTPhaseFencing       WorktreePhase = "fencing"
	WTPhaseStopping      WorktreePhase = "stopping"
	WTPhaseRechecking    WorktreePhase = "rechecking"
	WTPhaseRemoving      WorktreePhase = "removing"
	WTPhaseUnregistering WorktreePhase = "unregistering"
)

// WorktreeResult is a mutating operation's answer.
type WorktreeResult struct {
	OperationID string
	Kind        WorktreeKind
	Phase       WorktreePhase
	Checkout    *WorktreeCheckout
	Registered  bool
	Started     bool
	// StartError says why a requested start failed; the operation
	// itself succeeded.
	StartError *WorktreeError
	// Error is the refusal; nil on success.
	Error *WorktreeError
	// RetainedCheckout is the tree a failed create kept, to register
	// again.
	RetainedCheckout *WorktreeCheckout
}

// WorktreeProvenance is the Hub's durable record of a linked tree it
// made, or registered and stamped (WorktreeStore).
type WorktreeProvenance struct {
	// CheckoutID is the stamped tree's id; RepositoryID its repository's.
	CheckoutID, RepositoryID string
	// Path is the tree's folder when it was made or registered.
	Path string
	// SourceRef is the ref a tree the Hub made was made from, exactly as
	// chosen ("origin/main"); "" for a tree it only registered.
	SourceRef string
	// CreatedBy is the Hub user who made or registered it.
	CreatedBy string
	CreatedAt time.Time
}

// CheckWorktreeProvenance checks a record before a store keeps it: ids
// of 32 lower-case hex digits, an absolute clean path, a user.
func CheckWorktreeProvenance(p WorktreeProvenance) error {
	hex32 := func(s string) bool {
		if len(s) != 32 {
			return false
		}
		for _, c := range s {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	switch {
	case !hex32(p.CheckoutID) || !hex32(p.RepositoryID):
		return Errorf(Invalid, "a worktree's provenance needs its checkout's and repository's ids")
	case !path.IsAbs(p.Path) || path.Clean(p.Path) != p.Path:
		return Errorf(Invalid, "a worktree's provenance needs its clean absolute path")
	case p.CreatedBy == "":
		return Errorf(Invalid, "a worktree's provenance needs the user who made it")
	}
	return nil
}

// LocalDataCategory is one kind of local data in a tree.
type LocalDataCategory string

// The categories, from git status's XY code.
const (
	LocalTracked   LocalDataCategory = "tracked"   // any change to a tracked file
	LocalUntracked LocalDataCategory = "untracked" // ??
	LocalIgnored   LocalDataCategory = "ignored"   // !!
)

// LocalDataSummary is one category's count and first paths.
type LocalDataSummary struct {
	Count int
	// Sample holds up to five checkout-relative paths, sorted; one
	// ending in "/" stands for the whole folder.
	Sample []string
}

// LocalData is what deleting a tree would lose, by category, and the
// fingerprint that pins it between preflight and delete.
type LocalData struct {
	Categories  map[LocalDataCategory]LocalDataSummary
	Fingerprint string
}

// WorktreePreflight is preflight-delete's answer when nothing blocks.
type WorktreePreflight struct {
	Checkout     WorktreeCheckout
	RequiresStop bool
	// LocalData is nil for a clean tree.
	LocalData *LocalData
}

// CreateWorktreeRequest asks for a linked tree (hubCreateWorktree).
type CreateWorktreeRequest struct {
	SourceWorkspaceID string
	Mode              WorktreeMode
	// Branch is the new or checked-out branch; derived from the base
	// when empty (existing-local, remote-tracking).
	Branch string
	// Base names the start point exactly; BaseRef is looked up among
	// the local and the remote branches when Base is nil.
	Base    *WorktreeBase
	BaseRef string
	Start   bool
}

// WorktreeBase is a start point named exactly.
type WorktreeBase struct {
	Remote bool // a remote-tracking branch ("origin/main"), else a local one
	Ref    string
}

// WorktreeRequest names a checkout of a workspace's repository: open,
// register, forget, preflight-delete.
type WorktreeRequest struct {
	SourceWorkspaceID string
	// Reference is a registered workspace's id, a checkout id, or the
	// branch of exactly one linked tree (hub/worktree.Resolve).
	Reference string
	// Start asks open and register to start the workspace.
	Start bool
}

// DeleteWorktreeRequest asks to delete a linked tree the Hub created
// (hubDeleteWorktree).
type DeleteWorktreeRequest struct {
	WorktreeRequest
	// Confirm must be true.
	Confirm bool
	// Stop authorizes stopping the tree's own running session first.
	Stop bool
	// LocalDataFingerprint is the preflight's fingerprint the person
	// reviewed; "" when the preflight showed no local data.
	LocalDataFingerprint string
}
