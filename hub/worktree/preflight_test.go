package worktree_test

import (
	"errors"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// The blockers, one row each in the order the earlier system checks
// them; each row's facts would also trip every later row, so the row
// proves which one wins.
func TestTheFirstBlockerRefusesADeletion(t *testing.T) {
	ours := hub.WorktreeCheckout{Ownership: hub.OwnedByWharf, Availability: hub.WTPresent}
	everything := hub.TreeFacts{InProgress: "MERGE_HEAD", Submodules: true, NestedRepository: "vendor/lib"}
	with := func(f func(*worktree.DeleteFacts)) worktree.DeleteFacts {
		d := worktree.DeleteFacts{Checkout: ours, Listed: true, NestedWorktree: true, Tree: everything}
		d.Checkout.Locked = true
		f(&d)
		return d
	}
	for _, tc := range []struct {
		name  string
		facts worktree.DeleteFacts
		code  hub.WorktreeCode
	}{
		{"the main checkout", with(func(d *worktree.DeleteFacts) { d.Checkout.Main = true; d.Checkout.Ownership = hub.OwnedMain }), hub.WTOwnershipRequired},
		{"an uncertain identity", with(func(d *worktree.DeleteFacts) { d.Checkout.Ownership = hub.OwnedUncertain }), hub.WTIdentityUncertain},
		{"an external tree that is missing", with(func(d *worktree.DeleteFacts) {
			d.Checkout.Ownership, d.Checkout.Availability = hub.OwnedExternal, hub.WTMissing
		}), hub.WTIdentityUncertain},
		{"an external tree", with(func(d *worktree.DeleteFacts) { d.Checkout.Ownership = hub.OwnedExternal }), hub.WTOwnershipRequired},
		{"a tree git no longer lists", with(func(d *worktree.DeleteFacts) { d.Listed = false }), hub.WTIdentityUncertain},
		{"a replaced tree", with(func(d *worktree.DeleteFacts) { d.Checkout.Availability = hub.WTReplaced }), hub.WTIdentityUncertain},
		{"a Git lock", with(func(*worktree.DeleteFacts) {}), hub.WTGitLock},
		{"a nested worktree", with(func(d *worktree.DeleteFacts) { d.Checkout.Locked = false }), hub.WTNestedDependency},
		{"an operation in progress", with(func(d *worktree.DeleteFacts) { d.Checkout.Locked, d.NestedWorktree = false, false }), hub.WTExternalActivity},
		{"an initialized submodule", with(func(d *worktree.DeleteFacts) {
			d.Checkout.Locked, d.NestedWorktree, d.Tree.InProgress = false, false, ""
		}), hub.WTNestedDependency},
		{"a tree git cannot describe", with(func(d *worktree.DeleteFacts) {
			d.Checkout.Locked, d.NestedWorktree, d.Tree, d.TreeErr = false, false, hub.TreeFacts{}, errors.New("status failed")
		}), hub.WTIdentityUncertain},
		{"a nested repository", with(func(d *worktree.DeleteFacts) {
			d.Checkout.Locked, d.NestedWorktree, d.Tree.InProgress, d.Tree.Submodules = false, false, "", false
		}), hub.WTNestedDependency},
		{"nothing", with(func(d *worktree.DeleteFacts) {
			d.Checkout.Locked, d.NestedWorktree, d.Tree = false, false, hub.TreeFacts{Entries: []hub.StatusEntry{{Code: "??", Path: "x"}}}
		}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := worktree.Blocker(tc.facts)
			if tc.code == "" {
				is.True(err == nil) // clear: local data alone never blocks
				return
			}
			is.True(err != nil)
			is.Equal(err.Code, tc.code) // the first blocker
		})
	}
}
