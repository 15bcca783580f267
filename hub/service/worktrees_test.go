package service_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// wtEnv is a registered repository at /home/ann/src/app on branch main,
// with a local main and two remote branches.
func wtEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	main := e.repo("/home/ann/src/app")
	id := e.register(main)
	e.git.SetRefs(main, []string{"main"}, []string{"origin/feat", "origin/main"})
	return e, id
}

// inventory reads the inventory of source, failing the test on an error.
func (e *env) inventory(source string) hub.WorktreeInventory {
	e.t.Helper()
	inv, err := e.WorktreeInventory(e.ctx, e.ann, source)
	if err != nil {
		e.t.Fatal(err)
	}
	return inv
}

// checkout returns the checkout of source's inventory at p.
func (e *env) checkout(source, p string) (hub.WorktreeCheckout, bool) {
	for _, c := range e.inventory(source).Checkouts {
		if c.Path == p {
			return c, true
		}
	}
	return hub.WorktreeCheckout{}, false
}

// create creates a new branch's tree from local main, failing the test
// on a refusal.
func (e *env) createTree(source, branch string) hub.WorktreeResult {
	e.t.Helper()
	res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: source, Mode: hub.NewBranch,
		Branch: branch, Base: &hub.WorktreeBase{Ref: "main"}})
	if err != nil || res.Error != nil {
		e.t.Fatalf("create %s: %v %+v", branch, err, res.Error)
	}
	return res
}

func TestACreatedWorktreeIsRegisteredNamedAfterItsBranchAndListed(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	res := e.createTree(app, "task/login")
	is.Equal(res.Kind, hub.WTOpCreate)                                    // a create
	is.Equal(res.Phase, hub.WTPhaseComplete)                              // that completed
	is.True(res.Registered && !res.Started)                               // registered, not started
	is.Equal(res.Checkout.Path, "/home/ann/src/app.worktrees/task-login") // beside the main checkout
	is.Equal(res.Checkout.Ownership, hub.OwnedByWharf)                    // the Hub's
	is.Equal(res.Checkout.SourceRef, "main")                              // made from main

	inv := e.inventory(app)
	is.Equal(inv.Status, hub.InventoryReady) // read
	is.Equal(len(inv.Checkouts), 2)          // the main checkout and the tree
	is.True(inv.Checkouts[0].Main)           // main first
	is.Equal(inv.Checkouts[0].Ownership, hub.OwnedMain)
	tree := inv.Checkouts[1]
	is.Equal(tree.Branch, "task/login")   // on its branch
	is.Equal(tree.ParentWorkspaceID, app) // under the main workspace
	is.True(tree.Registered)              // as a workspace
	is.Equal(e.pathOf(tree.WorkspaceID), tree.Path)
	is.Equal(inv.Refs.Local, []string{"main", "task/login"}) // the new branch among the refs

	again := e.inventory(tree.WorkspaceID)
	is.Equal(again.SourceWorkspaceID, app) // a linked tree resolves to its main workspace
	is.Equal(again.RepositoryID, inv.RepositoryID)
	is.Equal(e.stateOf(tree.WorkspaceID).DisplayName, "task/login")   // its display name is its branch
	is.Equal(e.stateOf(tree.WorkspaceID).ParentID, app)               // the state links it to its parent
	is.True(e.stateOf(app).CreateWorktree)                            // and the main checkout can hold more
	is.Equal(e.stateOf(tree.WorkspaceID).Ownership, hub.OwnedByWharf) // the state says the Hub made it
	is.Equal(e.stateOf(tree.WorkspaceID).SourceRef, "main")           // and from what
	is.Equal(len(e.journals()), 0)                                    // no journal left
}

func TestACreateIsRefusedBeforeGitRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  hub.CreateWorktreeRequest
		code hub.WorktreeCode
	}{
		{"a 65-character branch", hub.CreateWorktreeRequest{Mode: hub.NewBranch, Branch: strings.Repeat("b", 65), Base: &hub.WorktreeBase{Ref: "main"}}, hub.WTInvalidInput},
		{"an invalid branch", hub.CreateWorktreeRequest{Mode: hub.NewBranch, Branch: "a..b", Base: &hub.WorktreeBase{Ref: "main"}}, hub.WTInvalidInput},
		{"a new branch without a name", hub.CreateWorktreeRequest{Mode: hub.NewBranch, Base: &hub.WorktreeBase{Ref: "main"}}, hub.WTInvalidInput},
		{"a branch that exists", hub.CreateWorktreeRequest{Mode: hub.NewBranch, Branch: "main", Base: &hub.WorktreeBase{Ref: "main"}}, hub.WTBranchExists},
		{"a base that names nothing", hub.CreateWorktreeRequest{Mode: hub.NewBranch, Branch: "x", Base: &hub.WorktreeBase{Ref: "nope"}}, hub.WTRefUnavailable},
		{"a base ref that names nothing", hub.CreateWorktreeRequest{Mode: hub.NewBranch, Branch: "x", BaseRef: "nope"}, hub.WTRefUnavailable},
		{"a branch checked out elsewhere", hub.CreateWorktreeRequest{Mode: hub.ExistingLocal, Branch: "main"}, hub.WTBranchInUse},
		{"a tracking branch named otherwise", hub.CreateWorktreeRequest{Mode: hub.RemoteTracking, Branch: "other", Base: &hub.WorktreeBase{Remote: true, Ref: "origin/feat"}}, hub.WTInvalidInput},
		{"a tracking branch from a local one", hub.CreateWorktreeRequest{Mode: hub.RemoteTracking, Base: &hub.WorktreeBase{Ref: "main"}}, hub.WTInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, app := wtEnv(t)
			tc.req.SourceWorkspaceID = app
			res, err := e.CreateWorktree(e.ctx, e.ann, tc.req)
			is.NoErr(err)                                // answered
			is.True(res.Error != nil)                    // with a refusal
			is.Equal(res.Error.Code, tc.code)            // of this kind
			is.Equal(e.git.Calls("add-worktree"), 0)     // before git ran
			is.Equal(len(e.inventory(app).Checkouts), 1) // nothing was made
			is.Equal(len(e.journals()), 0)               // and no journal is left
		})
	}
	t.Run("a base ref both local and remote", func(t *testing.T) {
		is := is.New(t)
		e, app := wtEnv(t)
		e.git.SetRefs("/home/ann/src/app", []string{"main", "origin/feat"}, []string{"origin/feat"})
		res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.NewBranch, Branch: "x", BaseRef: "origin/feat"})
		is.NoErr(err)
		is.Equal(res.Error.Code, hub.WTConflict) // never a near match
	})
	t.Run("an unknown workspace", func(t *testing.T) {
		is := is.New(t)
		e, _ := wtEnv(t)
		_, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: "nope", Mode: hub.NewBranch, Branch: "x", BaseRef: "main"})
		is.Equal(hub.KindOf(err), hub.NotFound) // a transport error: 404
	})
}

func TestARemoteBranchIsTrackedAndBothFoldersTakenIsRefused(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.RemoteTracking,
		Base: &hub.WorktreeBase{Remote: true, Ref: "origin/feat"}})
	is.NoErr(err)
	is.True(res.Error == nil)             // created
	is.Equal(res.Checkout.Branch, "feat") // the branch named after the remote one
	is.Equal(res.Checkout.SourceRef, "origin/feat")

	for _, d := range worktree.Destinations("/home/ann/src/app", "X") {
		e.dir(d) // something is at both folders the branch X could go in
	}
	res, err = e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.NewBranch, Branch: "X", BaseRef: "main"})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTDestinationOccupied) // refused
}
