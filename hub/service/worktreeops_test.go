package service_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func TestAWorktreeIsOpenedOnlyOnceRegistered(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := *e.createTree(app, "feature").Checkout
	res, err := e.OpenWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "feature", Start: true})
	is.NoErr(err)
	is.True(res.Error == nil)            // opened by its branch
	is.Equal(res.Kind, hub.WTOpStart)    // as a start
	is.True(res.Started)                 // and started, as asked
	is.True(e.Running(tree.WorkspaceID)) // the workspace runs

	_, err = e.ForgetWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: tree.WorkspaceID})
	is.NoErr(err) // forgotten, stopped first
	res, err = e.OpenWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "feature"})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTNotFound)                // an unregistered tree is not opened
	is.Equal(res.Error.ConflictCheckoutID, tree.CheckoutID) // it names the tree to register
	res, err = e.OpenWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: tree.Path})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTNotFound) // a path is never a reference
}

func TestForgettingKeepsTheTreeAndRegisteringAgainRecoversItsOwnership(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := *e.createTree(app, "feature").Checkout
	e.start(tree.WorkspaceID)

	res, err := e.ForgetWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: app})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTConflict) // the main workspace is not forgotten while its trees are workspaces

	res, err = e.ForgetWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: tree.WorkspaceID})
	is.NoErr(err)
	is.True(res.Error == nil)             // forgotten
	is.True(!e.Running(tree.WorkspaceID)) // its session stopped first
	is.True(e.isDir(tree.Path))           // its files kept
	c, ok := e.checkout(app, tree.Path)
	is.True(ok && !c.Registered)            // listed, not registered
	is.Equal(c.Ownership, hub.OwnedByWharf) // still the Hub's

	res, err = e.RegisterWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: c.CheckoutID})
	is.NoErr(err)
	is.True(res.Error == nil)                          // registered again
	is.Equal(res.Checkout.Ownership, hub.OwnedByWharf) // with its ownership
	is.Equal(res.Checkout.CheckoutID, tree.CheckoutID) // and identity
	res, err = e.RegisterWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: c.CheckoutID})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTConflict)           // once
	is.Equal(res.Error.Retry, hub.WTRetryOpenExisting) // open it instead
}

func TestATreeMadeElsewhereIsRegisteredButNeverDeletedByTheHub(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	e.dir("/home/ann/elsewhere")
	is.NoErr(e.git.AddWorktree(e.ctx, hub.AddWorktreeRequest{Main: "/home/ann/src/app", Dest: "/home/ann/elsewhere/x",
		Mode: hub.NewBranch, Branch: "x", Base: "main"})) // git worktree add, by hand
	c, ok := e.checkout(app, "/home/ann/elsewhere/x")
	is.True(ok)                              // listed
	is.Equal(c.Ownership, hub.OwnedExternal) // as external
	res, err := e.RegisterWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "x"})
	is.NoErr(err)
	is.True(res.Error == nil)                           // registered
	is.Equal(res.Checkout.Ownership, hub.OwnedExternal) // still external
	p, e2, err := e.PreflightDeleteWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "x"})
	is.NoErr(err)
	is.Equal(e2.Code, hub.WTOwnershipRequired) // the Hub does not delete it
	is.True(p.Checkout.Registered)
}

func TestADeleteNeedsTheFingerprintOfTheLocalDataAndKeepsTheBranch(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := *e.createTree(app, "feature").Checkout
	e.git.SetTreeFacts(tree.Path, hub.TreeFacts{Entries: []hub.StatusEntry{{Code: "??", Path: "notes.txt"}, {Code: "!!", Path: "build/"}}})
	req := hub.WorktreeRequest{SourceWorkspaceID: app, Reference: tree.WorkspaceID}

	p, refusal, err := e.PreflightDeleteWorktree(e.ctx, e.ann, req)
	is.NoErr(err)
	is.True(refusal == nil)                                                            // nothing blocks
	is.Equal(p.LocalData.Categories[hub.LocalUntracked].Sample, []string{"notes.txt"}) // the local data shows
	is.True(!p.RequiresStop)                                                           // a stopped tree

	del := func(fp string, confirm bool) hub.WorktreeResult {
		res, err := e.DeleteWorktree(e.ctx, e.ann, hub.DeleteWorktreeRequest{WorktreeRequest: req, Confirm: confirm, LocalDataFingerprint: fp})
		is.NoErr(err)
		return res
	}
	is.Equal(del(p.LocalData.Fingerprint, false).Error.Code, hub.WTInvalidInput) // not confirmed
	is.Equal(del("nothex", true).Error.Code, hub.WTInvalidInput)                 // a malformed fingerprint
	res := del("", true)
	is.Equal(res.Error.Code, hub.WTLocalData) // local data not acknowledged
	is.Equal(res.Error.Retry, hub.WTRetryDelete)

	e.git.SetTreeFacts(tree.Path, hub.TreeFacts{Entries: []hub.StatusEntry{{Code: "??", Path: "notes.txt"}, {Code: "??", Path: "new.txt"}, {Code: "!!", Path: "build/"}}})
	res = del(p.LocalData.Fingerprint, true)
	is.Equal(res.Error.Code, hub.WTLocalData)     // the files changed since the preflight
	is.Equal(res.Error.Retry, hub.WTRetryRefresh) // review again
	is.True(e.isDir(tree.Path))                   // nothing was removed

	p, _, err = e.PreflightDeleteWorktree(e.ctx, e.ann, req)
	is.NoErr(err)
	res = del(p.LocalData.Fingerprint, true)
	is.True(res.Error == nil) // deleted with the fresh fingerprint
	is.Equal(res.Phase, hub.WTPhaseComplete)
	is.True(!e.isDir(tree.Path)) // its files are gone
	_, ok := e.checkout(app, tree.Path)
	is.True(!ok) // it is not listed
	for _, w := range e.workspaces() {
		is.True(w.ID != tree.WorkspaceID) // nor registered
	}
	is.Equal(e.inventory(app).Refs.Local, []string{"feature", "main"}) // the branch is kept
	is.Equal(len(e.journals()), 0)
}

func TestEveryBlockerRefusesADeleteAndRemovesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(e *env, tree hub.WorktreeCheckout)
		stop  bool
		code  hub.WorktreeCode
	}{
		{"a Git lock", func(e *env, tree hub.WorktreeCheckout) { e.git.LockWorktree(tree.Path) }, false, hub.WTGitLock},
		{"a merge in progress", func(e *env, tree hub.WorktreeCheckout) {
			e.git.SetTreeFacts(tree.Path, hub.TreeFacts{InProgress: "MERGE_HEAD"})
		}, false, hub.WTExternalActivity},
		{"a submodule", func(e *env, tree hub.WorktreeCheckout) {
			e.git.SetTreeFacts(tree.Path, hub.TreeFacts{Submodules: true})
		}, false, hub.WTNestedDependency},
		{"a nested repository", func(e *env, tree hub.WorktreeCheckout) {
			e.git.SetTreeFacts(tree.Path, hub.TreeFacts{NestedRepository: "vendor/lib"})
		}, false, hub.WTNestedDependency},
		{"a running session without stop", func(e *env, tree hub.WorktreeCheckout) { e.start(tree.WorkspaceID) }, false, hub.WTConflict},
		{"a tree removed behind the Hub's back", func(e *env, tree hub.WorktreeCheckout) { e.fs.RemoveAll(tree.Path) }, true, hub.WTIdentityUncertain},
		{"the main checkout", nil, true, hub.WTOwnershipRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e, app := wtEnv(t)
			tree := *e.createTree(app, "feature").Checkout
			ref := tree.WorkspaceID
			if tc.setup == nil {
				ref = app
			} else {
				tc.setup(e, tree)
			}
			res, err := e.DeleteWorktree(e.ctx, e.ann, hub.DeleteWorktreeRequest{
				WorktreeRequest: hub.WorktreeRequest{SourceWorkspaceID: app, Reference: ref}, Confirm: true, Stop: tc.stop})
			is.NoErr(err)
			is.True(res.Error != nil)                   // refused
			is.Equal(res.Error.Code, tc.code)           // by this blocker
			is.Equal(e.git.Calls("remove-worktree"), 0) // git removed nothing
			is.Equal(len(e.journals()), 0)
		})
	}
}

func TestARunningTreeIsStoppedWhenTheDeleteSaysSo(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := *e.createTree(app, "feature").Checkout
	e.start(tree.WorkspaceID)
	p, _, err := e.PreflightDeleteWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "feature"})
	is.NoErr(err)
	is.True(p.RequiresStop) // the preflight says it must stop
	res, err := e.DeleteWorktree(e.ctx, e.ann, hub.DeleteWorktreeRequest{
		WorktreeRequest: hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "feature"}, Confirm: true, Stop: true})
	is.NoErr(err)
	is.True(res.Error == nil)             // deleted
	is.True(!e.Running(tree.WorkspaceID)) // after its session stopped
}

func TestACreateInterruptedBeforeRegistrationIsCompletedAtTheNextStart(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	e.git.FailNext("write-stamp", errors.New("disk full")) // git made the tree; the Hub cannot stamp it
	res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.NewBranch, Branch: "feature", BaseRef: "main"})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTIdentityUncertain) // so it does not register it
	is.Equal(res.Error.Phase, hub.WTPhaseRegistering)
	is.True(res.RetainedCheckout != nil) // it is kept
	is.True(e.isDir("/home/ann/src/app.worktrees/feature"))
	is.Equal(len(e.journals()), 1) // under its journal

	is.Equal(e.git.Calls("check-out-worktree"), 0) // a create whose git finished checks nothing out again
	e.restart()
	is.Equal(e.git.Calls("check-out-worktree"), 1) // an unstamped tree is checked out again: its making may have been cut
	c, ok := e.checkout(app, "/home/ann/src/app.worktrees/feature")
	is.True(ok && c.Registered)             // the next start registered it
	is.Equal(c.Ownership, hub.OwnedByWharf) // as the Hub's
	is.Equal(len(e.journals()), 0)          // and settled its journal
}

func TestARegistrationRetriedByItsCreatorRegistersTheSameTree(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	bob := e.user("bob")
	e.git.FailNext("write-stamp", errors.New("disk full"))
	res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.NewBranch, Branch: "feature", BaseRef: "main"})
	is.NoErr(err)
	retained := res.RetainedCheckout
	is.True(retained != nil)
	res, err = e.RegisterWorktree(e.ctx, bob, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: retained.CheckoutID})
	is.NoErr(err)
	is.Equal(res.Error.Code, hub.WTPermissionDenied) // another user's pending create
	res, err = e.RegisterWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: "feature"})
	is.NoErr(err)
	is.True(res.Error == nil)                          // its creator's retry registers it
	is.Equal(res.Checkout.Ownership, hub.OwnedByWharf) // as the Hub's
	is.Equal(len(e.journals()), 0)
}

// A linked worktree follows its main workspace's credentials, live, and
// takes none of its own.
func TestALinkedWorktreeIsLentItsMainWorkspacesCredentials(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := e.createTree(app, "feature").Checkout.WorkspaceID
	gh := e.token("gh", "github.com", "ghp_value", hub.CapHTTPSGit)
	_, err := e.AssignCredential(e.ctx, gh.ID, hub.AssignCredentialRequest{WorkspaceID: tree, Role: hub.RoleAuthentication, Host: "github.com"})
	is.Equal(hub.KindOf(err), hub.Conflict)                              // a tree takes no assignment of its own
	is.True(strings.Contains(hub.MessageOf(err), "main workspace "+app)) // and says where to assign
	_, err = e.UnassignCredential(e.ctx, gh.ID, hub.UnassignCredentialRequest{WorkspaceID: tree, Role: hub.RoleAuthentication, Host: "github.com"})
	is.Equal(hub.KindOf(err), hub.Conflict) // nor loses one

	e.assign(gh.ID, app, hub.RoleAuthentication, "github.com")
	e.start(tree)
	c := e.backend.Spec(tree).Credentials
	is.Equal(len(c.Logins), 1) // the tree's session is lent the main workspace's token
	is.Equal(c.Logins[0].CredentialID, gh.ID)
	_, tok, err := c.Broker.Token(e.ctx, "github.com")
	is.NoErr(err)
	is.Equal(string(tok), "ghp_value") // through its broker
	_, err = e.UnassignCredential(e.ctx, gh.ID, hub.UnassignCredentialRequest{WorkspaceID: app, Role: hub.RoleAuthentication, Host: "github.com"})
	is.NoErr(err) // unassigned from the main workspace
	_, _, err = c.Broker.Token(e.ctx, "github.com")
	is.Equal(hub.KindOf(err), hub.NotFound) // the tree's session follows at once
}

// A delete cut after git removed the tree's folder but before its
// administrative directory (git's order) is finished at the next start,
// and the tree unregistered: a workspace never stays registered on a
// tree its confirmed delete removed.
func TestADeleteCutBetweenTheFolderAndItsGitDirectoryIsFinishedAtTheNextStart(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := *e.createTree(app, "feature").Checkout
	l, err := e.git.ListWorktrees(e.ctx, "/home/ann/src/app")
	is.NoErr(err)
	gitDir := l.Entries[1].GitDir
	intent, err := json.Marshal(map[string]any{"version": 1, "operationId": "00000000-0000-4000-8000-000000000000",
		"repositoryId": tree.RepositoryID, "mainPath": "/home/ann/src/app", "path": tree.Path, "gitDir": gitDir,
		"checkoutId": tree.CheckoutID, "workspaceId": tree.WorkspaceID})
	is.NoErr(err)
	is.NoErr(e.store.Update(e.ctx, func(tx hub.Tx) error {
		_, err := tx.AddJournal(hub.Journal{Kind: hub.JournalWorktreeDelete, Data: intent, CreatedAt: e.clock.Now()})
		return err
	})) // a delete's journal, as the killed Hub left it
	e.fs.RemoveAll(tree.Path) // git had removed the folder, not yet its git directory

	e.restart()
	_, ok := e.checkout(app, tree.Path)
	is.True(!ok) // the removal was finished
	for _, w := range e.workspaces() {
		is.True(w.ID != tree.WorkspaceID) // and the tree unregistered
	}
	is.Equal(len(e.journals()), 0) // its journal settled
}

// A tree git did not finish making (no checkout can complete it: its
// branch was never made, say) is removed at the next start, and the
// create counts as never having happened.
func TestATreeGitDidNotFinishMakingIsUndoneAtTheNextStart(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	e.git.FailNext("write-stamp", errors.New("killed"))
	res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.NewBranch, Branch: "feature", BaseRef: "main"})
	is.NoErr(err)
	is.True(res.Error != nil) // cut before its registration
	e.git.FailNext("check-out-worktree", errors.New("HEAD names no commit"))
	e.restart()
	_, ok := e.checkout(app, "/home/ann/src/app.worktrees/feature")
	is.True(!ok)                                             // the half-made tree is gone
	is.True(!e.isDir("/home/ann/src/app.worktrees/feature")) // with its folder
	is.Equal(len(e.journals()), 0)                           // and the create's journal
}

// What the Hub keeps in memory of a worktree for the state goes with its
// registration: it holds no more than the worktrees registered now.
func TestTheStateFactsOfAForgottenWorktreeAreNotKept(t *testing.T) {
	is := is.New(t)
	e, app := wtEnv(t)
	tree := *e.createTree(app, "feature").Checkout
	e.inventory(app)
	is.Equal(service.WorktreesShown(e.Hub), 1) // kept for the state
	_, err := e.ForgetWorktree(e.ctx, e.ann, hub.WorktreeRequest{SourceWorkspaceID: app, Reference: tree.WorkspaceID})
	is.NoErr(err)
	e.inventory(app)
	is.Equal(service.WorktreesShown(e.Hub), 0) // forgotten with its registration
}
