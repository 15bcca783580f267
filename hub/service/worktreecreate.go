package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// Creating, registering and opening worktrees.

// errUnfinishedTree is completeCreate's error for a tree git did not
// finish making and that cannot be checked out (its branch was never
// made, say): recovery undoes it.
var errUnfinishedTree = errors.New("git did not finish making the worktree")

// wtPlan is a create, checked before anything runs.
type wtPlan struct {
	mode      hub.WorktreeMode
	branch    string
	base      string // the start point; a remote one when remote
	remote    bool
	sourceRef string // the base as chosen, for the provenance
	dest      string
}

// CreateWorktree makes a linked tree of the source's repository for a
// branch, stamps it, registers it (display name: the branch) and, when
// asked, starts it (hubCreateWorktree). Every check runs before git
// does; once git made the tree, a failure keeps it, pending, for
// register to retry.
func (h *Hub) CreateWorktree(ctx context.Context, caller hub.DeviceSession, req hub.CreateWorktreeRequest) (hub.WorktreeResult, error) {
	res := hub.WorktreeResult{OperationID: uuid.NewString(), Kind: hub.WTOpCreate, Phase: hub.WTPhaseValidating}
	refuse := func(e *hub.WorktreeError) (hub.WorktreeResult, error) {
		res.Error = sanitized(e)
		res.Error.Phase = res.Phase
		return res, nil
	}
	if req.Branch != "" {
		if e := worktree.CheckBranch(req.Branch); e != nil {
			return refuse(e)
		}
	}
	f, refusal, err := h.family(ctx, req.SourceWorkspaceID)
	if err != nil {
		return hub.WorktreeResult{}, err
	}
	if refusal != nil {
		return refuse(refusal)
	}
	unlock, err := h.wtLocks.Lock(ctx, f.repoID)
	if err != nil {
		return hub.WorktreeResult{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	if f, refusal, err = h.family(ctx, req.SourceWorkspaceID); err != nil { // what git lists now, under the lock
		return hub.WorktreeResult{}, err
	} else if refusal != nil {
		return refuse(refusal)
	}
	if !strings.HasSuffix(f.listing.CommonDir, "/.git") {
		return refuse(wtErrorf(hub.WTInvalidInput, "This repository keeps its Git directory elsewhere, so Wharf does not create worktrees for it."))
	}
	refs, err := h.refs(ctx, f)
	if err != nil {
		return refuse(wtErrorf(hub.WTInventoryUnavailable, "The branches of this repository could not be read.").WithRetry(hub.WTRetryRefresh))
	}
	plan, e := h.planCreate(ctx, f, refs, req)
	if e != nil {
		return refuse(e)
	}
	res.Phase = hub.WTPhaseReserving
	if err := h.fence(fenceRegister); err != nil {
		return refuse(wtErrorf(hub.WTConflict, hub.MessageOf(err)))
	}
	release, err := h.reserved.reserve(f.pl.key(plan.dest))
	if err != nil {
		return refuse(wtErrorf(hub.WTConflict, "Another operation is changing this folder. Try again when it is done.").WithRetry(hub.WTRetryRefresh))
	}
	defer release()
	if err := f.pl.fs.Mkdir(worktree.TreesDir(f.mainPath)); err != nil && !errors.Is(err, fs.ErrExist) {
		h.log.LogAttrs(ctx, slog.LevelWarn, "the worktrees folder could not be made", slog.Any("err", err))
		return refuse(wtErrorf(hub.WTPermissionDenied, "The folder for this repository's worktrees could not be made."))
	}
	in := worktreeCreateIntent{Version: journalVersion, OperationID: res.OperationID, User: caller.User, RepositoryID: f.repoID,
		MainPath: f.mainPath, Path: plan.dest, Branch: plan.branch, SourceRef: plan.sourceRef,
		Stamp: worktree.StampPrefix + uuid.NewString(), Backend: f.pl.journalName()}
	jid, err := h.openJournal(ctx, hub.JournalWorktreeCreate, in)
	if err != nil {
		return hub.WorktreeResult{}, err
	}
	res.Phase = hub.WTPhaseCreating
	err = f.pl.git.AddWorktree(ctx, hub.AddWorktreeRequest{Main: f.mainPath, Dest: plan.dest, Mode: plan.mode,
		Branch: plan.branch, Base: plan.base, BaseRemote: plan.remote})
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "git worktree add failed", slog.String("branch", plan.branch), slog.Any("err", err))
		if _, statErr := f.pl.fs.Lstat(plan.dest); statErr == nil {
			h.wtPend.put(pendingCreate{journal: jid, intent: in}) // git made it: kept, for register
			return refuse(wtErrorf(hub.WTConflict, "Git made the worktree but could not finish it; its files are kept.").WithRetry(hub.WTRetryRefresh))
		}
		_ = h.closeWorktreeJournal(ctx, jid)
		return refuse(wtErrorf(hub.WTConflict, "Git could not create the worktree. Nothing was created.").WithRetry(hub.WTRetryRefresh))
	}
	p := pendingCreate{journal: jid, intent: in}
	res.Phase = hub.WTPhaseVerifying
	w, e, err := h.completeCreate(ctx, p, true)
	if err != nil || e != nil {
		h.wtPend.put(p)
		if e == nil {
			h.log.LogAttrs(ctx, slog.LevelError, "a created worktree could not be registered", slog.Any("err", err))
			e = wtErrorf(hub.WTRegistrationFailed, "The worktree was created but could not be registered; its files are kept.").WithRetry(hub.WTRetryRegistration)
		}
		res.Phase = hub.WTPhaseRegistering
		res.RetainedCheckout = h.checkoutAt(ctx, f.source.ID, plan.dest)
		if res.RetainedCheckout != nil {
			e.RetainedCheckoutID = res.RetainedCheckout.CheckoutID
		}
		return refuse(e)
	}
	return h.finishWorktree(ctx, res, w, req.Start), nil
}

// planCreate checks a create against the repository's refs and trees,
// in the earlier system's order, and picks its folder.
func (h *Hub) planCreate(ctx context.Context, f wtFamily, refs hub.WorktreeRefs, req hub.CreateWorktreeRequest) (wtPlan, *hub.WorktreeError) {
	p := wtPlan{mode: req.Mode}
	base := req.Base
	if base == nil && req.BaseRef != "" {
		local, remote := slices.Contains(refs.Local, req.BaseRef), slices.Contains(refs.Remote, req.BaseRef)
		switch {
		case local && remote:
			return p, wtErrorf(hub.WTConflict, "Both a local and a remote branch are named "+req.BaseRef+". Choose one.")
		case !local && !remote:
			return p, wtErrorf(hub.WTRefUnavailable, "No branch is named "+req.BaseRef+". Fetch, then try again.").WithRetry(hub.WTRetryFetch)
		}
		base = &hub.WorktreeBase{Remote: remote, Ref: req.BaseRef}
	}
	switch req.Mode {
	case hub.NewBranch:
		if req.Branch == "" {
			return p, wtErrorf(hub.WTInvalidInput, "Name the new branch.")
		}
		if base == nil {
			return p, wtErrorf(hub.WTInvalidInput, "Choose the branch to start from.")
		}
		p.branch = req.Branch
	case hub.ExistingLocal:
		ref := req.Branch
		if base != nil {
			if base.Remote {
				return p, wtErrorf(hub.WTInvalidInput, "An existing local branch is checked out from a local branch.")
			}
			ref = base.Ref
		}
		if ref == "" || req.Branch != "" && req.Branch != ref {
			return p, wtErrorf(hub.WTInvalidInput, "Name the local branch to check out.")
		}
		p.branch, base = ref, &hub.WorktreeBase{Ref: ref}
	case hub.RemoteTracking:
		if base == nil || !base.Remote {
			return p, wtErrorf(hub.WTInvalidInput, "Choose the remote branch to track.")
		}
		_, derived, ok := strings.Cut(base.Ref, "/")
		if !ok || derived == "" || req.Branch != "" && req.Branch != derived {
			return p, wtErrorf(hub.WTInvalidInput, "A tracking branch is named after its remote branch ("+derived+").")
		}
		p.branch = derived
	default:
		return p, wtErrorf(hub.WTInvalidInput, "Choose how the worktree gets its branch.")
	}
	if e := worktree.CheckBranch(p.branch); e != nil {
		return p, e
	}
	listed := refs.Local
	if base.Remote {
		listed = refs.Remote
	}
	if !slices.Contains(listed, base.Ref) {
		return p, wtErrorf(hub.WTRefUnavailable, "The branch "+base.Ref+" is not there any more.").WithRetry(hub.WTRetryRefresh)
	}
	p.base, p.remote, p.sourceRef = base.Ref, base.Remote, base.Ref
	if p.mode != hub.ExistingLocal && slices.Contains(refs.Local, p.branch) {
		return p, wtErrorf(hub.WTBranchExists, "A branch named "+p.branch+" already exists; no branch was reset.")
	}
	for _, e := range f.listing.Entries {
		if e.Branch == p.branch {
			err := wtErrorf(hub.WTBranchInUse, "The branch "+p.branch+" is checked out in another worktree. Open that one instead.").WithRetry(hub.WTRetryOpenExisting)
			if e.Main {
				err.ConflictCheckoutID = worktree.CheckoutID(e.GitDir, "")
			} else if stamp, serr := f.pl.git.ReadStamp(ctx, e.GitDir); serr == nil && worktree.ValidStamp(stamp) {
				err.ConflictCheckoutID = worktree.CheckoutID(e.GitDir, stamp)
			} else {
				err.ConflictCheckoutID = worktree.CheckoutID(e.GitDir, "")
			}
			return p, err
		}
	}
	for _, d := range worktree.Destinations(f.mainPath, p.branch) {
		if _, err := f.pl.fs.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			p.dest = d
			return p, nil
		}
	}
	return p, worktree.Occupied()
}

// completeCreate stamps the tree a create made (when its stamp is
// missing), checks the stamp reads back, and registers the tree with its
// provenance, deleting the create's journal in the same transaction.
// Unless checkedOut says git finished making it, a tree without its
// stamp is checked out again first: the create may have been cut
// between git making the tree and checking it out, which leaves no file
// and every tracked file deleted in its index (the stamp comes after
// the checkout, so a stamped tree is whole).
func (h *Hub) completeCreate(ctx context.Context, p pendingCreate, checkedOut bool) (hub.Workspace, *hub.WorktreeError, error) {
	in := p.intent
	uncertain := wtErrorf(hub.WTIdentityUncertain, "Wharf could not confirm the new worktree's identity; its files are kept.").WithRetry(hub.WTRetryRefresh)
	pl, err := h.placeOf(ctx, in.Backend)
	if err != nil {
		return hub.Workspace{}, nil, err
	}
	listing, err := pl.git.ListWorktrees(ctx, in.MainPath)
	if err != nil {
		return hub.Workspace{}, nil, err
	}
	var gitDir string
	for _, e := range listing.Entries {
		if !e.Main && pl.canonical(e.Path) == in.Path {
			gitDir = e.GitDir
		}
	}
	if gitDir == "" || repositoryID(pl, listing.CommonDir) != in.RepositoryID {
		return hub.Workspace{}, uncertain, nil
	}
	stamp, err := pl.git.ReadStamp(ctx, gitDir)
	if err == nil && stamp == "" && !checkedOut {
		if err := pl.git.CheckOutWorktree(ctx, in.Path); err != nil {
			return hub.Workspace{}, nil, fmt.Errorf("%w: %w", errUnfinishedTree, err)
		}
	}
	if err == nil && stamp == "" {
		if err = pl.git.WriteStamp(ctx, gitDir, in.Stamp); err == nil {
			stamp, err = pl.git.ReadStamp(ctx, gitDir)
		}
	}
	if err != nil || stamp != in.Stamp {
		return hub.Workspace{}, uncertain, nil
	}
	prov := hub.WorktreeProvenance{CheckoutID: worktree.CheckoutID(gitDir, stamp), RepositoryID: in.RepositoryID, Path: in.Path,
		SourceRef: in.SourceRef, CreatedBy: in.User, CreatedAt: h.clock.Now()}
	w, err := h.registerTree(ctx, pl, in.Path, in.Branch, in.MainPath, &prov, p.journal)
	if err != nil {
		return hub.Workspace{}, nil, err
	}
	h.wtPend.drop(pl.key(in.Path))
	return w, nil, nil
}

// registerTree registers the tree at dir on pl as a workspace named
// after its branch, with its provenance when the Hub made it, and
// deletes journal (when not 0), all in one transaction, under the
// onboarding lock.
func (h *Hub) registerTree(ctx context.Context, pl place, dir, branch, mainPath string, prov *hub.WorktreeProvenance, journal int64) (hub.Workspace, error) {
	name, err := hub.NormalizeDisplayName(branch)
	if err != nil {
		name = hub.DefaultDisplayName(dir)
	}
	h.onboardMu.Lock()
	defer h.onboardMu.Unlock()
	main, _, err := h.registeredAt(ctx, pl.name, mainPath)
	if err != nil {
		return hub.Workspace{}, err
	}
	var w hub.Workspace
	err = h.commit(ctx, func(tx *writes) error {
		if _, ok, err := workspaceAt(tx, pl.name, dir); err != nil {
			return err
		} else if ok {
			return hub.Errorf(hub.Conflict, "the worktree is registered already")
		}
		id, err := mintID(tx, dir)
		if err != nil {
			return err
		}
		w = hub.Workspace{ID: id, Path: dir, DisplayName: name, Backend: pl.name, RegisteredAt: h.clock.Now()}
		if err := tx.CreateWorkspace(w); err != nil {
			return err
		}
		if prov != nil {
			if err := tx.PutWorktreeProvenance(*prov, main); err != nil {
				return err
			}
		}
		if journal != 0 {
			return tx.DeleteJournal(journal)
		}
		return nil
	})
	return w, err
}

// closeWorktreeJournal deletes a worktree journal whose operation left
// nothing to recover. One that cannot be deleted stays for the next
// start: it fences nothing.
func (h *Hub) closeWorktreeJournal(ctx context.Context, id int64) error {
	err := h.commit(context.WithoutCancel(ctx), func(tx *writes) error { return tx.DeleteJournal(id) })
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "a worktree journal could not be deleted; the next start settles it", slog.Int64("journal", id), slog.Any("err", err))
	}
	return err
}

// checkoutAt describes the checkout at dir in the repository of
// workspace source, nil when there is none or the inventory fails.
func (h *Hub) checkoutAt(ctx context.Context, source, dir string) *hub.WorktreeCheckout {
	f, refusal, err := h.family(ctx, source)
	if err != nil || refusal != nil {
		return nil
	}
	cs, err := h.checkouts(ctx, f)
	if err != nil {
		return nil
	}
	for _, c := range cs {
		if c.Path == dir {
			return &c
		}
	}
	return nil
}

// finishWorktree runs the optional start of a registered tree and
// completes res.
func (h *Hub) finishWorktree(ctx context.Context, res hub.WorktreeResult, w hub.Workspace, start bool) hub.WorktreeResult {
	res.Phase, res.Registered = hub.WTPhaseComplete, true
	if start && !h.Running(w.ID) {
		if _, err := h.StartWorkspace(ctx, w.ID); err != nil {
			res.StartError = sanitized(wtErrorf(hub.WTStartFailed, hub.MessageOf(err)).WithRetry(hub.WTRetryStart))
		}
	}
	res.Started = h.Running(w.ID)
	res.Checkout = h.checkoutAt(ctx, w.ID, w.Path)
	return res
}
