package worktree

import "github.com/wharfhub/wharf/hub"

// DeleteFacts is what the service learned about a checkout to delete,
// from a fresh listing, the registry and the tree itself.
type DeleteFacts struct {
	// Checkout is the checkout the reference resolved to.
	Checkout hub.WorktreeCheckout
	// Listed is true when a fresh `git worktree list` still lists it at
	// its path with its identity.
	Listed bool
	// NestedWorktree is true when another linked tree lies inside it.
	NestedWorktree bool
	// Tree is what InspectTree found; TreeErr its failure (an unreadable
	// marker, a failed status, a path that is not UTF-8).
	Tree    hub.TreeFacts
	TreeErr error
}

// Blocker answers the one thing that refuses deleting a checkout, in the
// order below, or nil when it is clear (its local data then needs
// acknowledging, CheckLocalData): the main checkout, a tree the Hub
// cannot prove it made, one git no longer lists, a Git lock, a nested
// worktree, an operation in progress, an initialized submodule, a tree
// git cannot describe, a nested repository. The acknowledgement of local
// data overrides none of them.
func Blocker(f DeleteFacts) *hub.WorktreeError {
	c := f.Checkout
	switch {
	case c.Main:
		return hub.WorktreeRefusal(hub.WTOwnershipRequired, "The main checkout is the repository itself: it is never deleted here.")
	case c.Ownership != hub.OwnedByWharf && (c.Ownership == hub.OwnedUncertain || c.Availability != hub.WTPresent):
		return hub.WorktreeRefusal(hub.WTIdentityUncertain, "Wharf cannot confirm which checkout this is, so it deletes nothing.").WithRetry(hub.WTRetryRefresh)
	case c.Ownership != hub.OwnedByWharf:
		return hub.WorktreeRefusal(hub.WTOwnershipRequired, "Wharf did not create this worktree, so it does not delete its files. Remove it from Wharf instead.")
	case c.Availability != hub.WTPresent || !f.Listed:
		return hub.WorktreeRefusal(hub.WTIdentityUncertain, "The worktree is not available at its recorded location.").WithRetry(hub.WTRetryRefresh)
	case c.Locked:
		return hub.WorktreeRefusal(hub.WTGitLock, "The worktree is locked in Git (git worktree lock). Unlock it to delete it.")
	case f.NestedWorktree:
		return hub.WorktreeRefusal(hub.WTNestedDependency, "Another worktree lies inside this one. Delete that one first.")
	case f.TreeErr == nil && f.Tree.InProgress != "":
		return hub.WorktreeRefusal(hub.WTExternalActivity, "A Git operation is in progress in the worktree ("+f.Tree.InProgress+"). Finish or abort it first.").WithRetry(hub.WTRetryRefresh)
	case f.TreeErr == nil && f.Tree.Submodules:
		return hub.WorktreeRefusal(hub.WTNestedDependency, "The worktree contains an initialized submodule, which deletion would lose.")
	case f.TreeErr != nil:
		return hub.WorktreeRefusal(hub.WTIdentityUncertain, "Git could not describe the worktree's files, so nothing is deleted.").WithRetry(hub.WTRetryRefresh)
	case f.Tree.NestedRepository != "":
		return hub.WorktreeRefusal(hub.WTNestedDependency, "The worktree contains another repository ("+f.Tree.NestedRepository+"), which deletion would lose.")
	}
	return nil
}
