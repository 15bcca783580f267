package service

import (
	"context"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// Registering, opening and forgetting worktrees: none of them touches a
// tree's files but its stamp.

// resolved is the checkout a request's reference names, in its family.
type resolved struct {
	f         wtFamily
	checkouts []hub.WorktreeCheckout
	c         hub.WorktreeCheckout
}

// resolve reads the family of req's source and finds the checkout its
// reference names. refuse is what to answer instead.
func (h *Hub) resolve(ctx context.Context, req hub.WorktreeRequest, empty string) (r resolved, refusal *hub.WorktreeError, err error) {
	if req.Reference == "" {
		return r, wtErrorf(hub.WTInvalidInput, empty), nil
	}
	r.f, refusal, err = h.family(ctx, req.SourceWorkspaceID)
	if err != nil || refusal != nil {
		return r, refusal, err
	}
	if r.checkouts, err = h.checkouts(ctx, r.f); err != nil {
		return r, nil, err
	}
	r.c, refusal = worktree.Resolve(req.Reference, r.checkouts)
	return r, refusal, nil
}

// wtResult starts the answer of an operation of kind.
func wtResult(kind hub.WorktreeKind) hub.WorktreeResult {
	return hub.WorktreeResult{OperationID: uuid.NewString(), Kind: kind}
}

// refused completes res as a refusal.
func refused(res hub.WorktreeResult, e *hub.WorktreeError) hub.WorktreeResult {
	res.Error = sanitized(e)
	return res
}

// RegisterWorktree registers a linked tree as a workspace
// (hubRegisterWorktree): the retry of a create whose registration
// failed (the same tree, verified again; only its creator may), or the
// first registration of a tree made elsewhere, which is stamped for its
// identity but stays external (the Hub never deletes its files).
func (h *Hub) RegisterWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreeResult, error) {
	res := wtResult(hub.WTOpRegister)
	r, e, err := h.resolve(ctx, req, "Name the worktree to register.")
	if err != nil {
		return hub.WorktreeResult{}, err
	}
	if e != nil {
		return refused(res, e), nil
	}
	unlock, err := h.wtLocks.Lock(ctx, r.f.repoID)
	if err != nil {
		return hub.WorktreeResult{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	c := r.c
	if p, ok := h.wtPend.get(r.f.pl.key(c.Path)); ok {
		if p.intent.User != caller.User {
			return refused(res, wtErrorf(hub.WTPermissionDenied, "Another user's worktree creation is pending; only they can finish it.")), nil
		}
		w, e, err := h.completeCreate(ctx, p, false)
		switch {
		case err != nil:
			return refused(res, wtErrorf(hub.WTRegistrationFailed, "The worktree could not be registered; its files are kept.").WithRetry(hub.WTRetryRegistration)), nil
		case e != nil:
			return refused(res, e), nil
		}
		return h.finishWorktree(ctx, res, w, req.Start), nil
	}
	switch {
	case c.Main:
		return refused(res, wtErrorf(hub.WTInvalidInput, "The main checkout is registered as the repository's workspace, not as a worktree.")), nil
	case c.Registered:
		e := wtErrorf(hub.WTConflict, "The worktree is registered already. Open it instead.").WithRetry(hub.WTRetryOpenExisting)
		e.ConflictCheckoutID = c.CheckoutID
		return refused(res, e), nil
	case c.Ownership == hub.OwnedUncertain || c.Availability != hub.WTPresent:
		return refused(res, wtErrorf(hub.WTIdentityUncertain, "Wharf cannot confirm which checkout this is, so it does not register it.").WithRetry(hub.WTRetryRefresh)), nil
	case c.Detached:
		return refused(res, wtErrorf(hub.WTInvalidInput, "A detached checkout has no branch to name it by.")), nil
	}
	if c.Ownership == hub.OwnedExternal && !h.stamped(ctx, r.f, c) {
		return refused(res, wtErrorf(hub.WTIdentityUncertain, "Wharf could not give the worktree an identity; it was not registered.").WithRetry(hub.WTRetryRefresh)), nil
	}
	w, err := h.registerTree(ctx, r.f.pl, c.Path, c.Branch, r.f.mainPath, nil, 0)
	if err != nil {
		if hub.KindOf(err) == hub.Conflict {
			return refused(res, wtErrorf(hub.WTConflict, "The worktree is registered already. Open it instead.").WithRetry(hub.WTRetryOpenExisting)), nil
		}
		return hub.WorktreeResult{}, err
	}
	return h.finishWorktree(ctx, res, w, req.Start), nil
}

// stamped stamps an external tree that has no stamp yet, so its
// identity outlives git's reuse of its administrative name; one already
// stamped (by this Hub before a forget, or another) keeps its stamp.
func (h *Hub) stamped(ctx context.Context, f wtFamily, c hub.WorktreeCheckout) bool {
	for _, e := range f.listing.Entries {
		if e.Main || f.pl.canonical(e.Path) != c.Path {
			continue
		}
		stamp, err := f.pl.git.ReadStamp(ctx, e.GitDir)
		if err != nil {
			return false
		}
		if stamp != "" {
			return worktree.ValidStamp(stamp)
		}
		return f.pl.git.WriteStamp(ctx, e.GitDir, worktree.StampPrefix+uuid.NewString()) == nil
	}
	return false
}

// OpenWorktree opens a registered tree (hubOpenWorktree): started when
// asked and not running; it never registers anything.
func (h *Hub) OpenWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreeResult, error) {
	res := wtResult(hub.WTOpStart)
	r, e, err := h.resolve(ctx, req, "Name the worktree to open.")
	if err != nil {
		return hub.WorktreeResult{}, err
	}
	if e != nil {
		return refused(res, e), nil
	}
	c := r.c
	switch {
	case !c.Registered:
		e := wtErrorf(hub.WTNotFound, "The worktree is not a workspace yet. Register it first.")
		e.ConflictCheckoutID = c.CheckoutID
		return refused(res, e), nil
	case c.Availability == hub.WTMissing:
		return refused(res, wtErrorf(hub.WTNotFound, "The worktree's folder is missing.").WithRetry(hub.WTRetryRefresh)), nil
	case c.Availability == hub.WTReplaced:
		return refused(res, wtErrorf(hub.WTIdentityUncertain, "The worktree's folder now holds a different checkout.").WithRetry(hub.WTRetryRefresh)), nil
	}
	res.Phase, res.Registered, res.Checkout = hub.WTPhaseComplete, true, &c
	if req.Start && !c.Running {
		if _, err := h.StartWorkspace(ctx, c.WorkspaceID); err != nil {
			res.StartError = sanitized(wtErrorf(hub.WTStartFailed, hub.MessageOf(err)).WithRetry(hub.WTRetryStart))
		}
		h.live.AnnounceWorktrees(nil, r.f.main)
	}
	res.Started = h.Running(c.WorkspaceID)
	res.Checkout.Running = res.Started
	return res, nil
}

// ForgetWorktree unregisters a workspace of the family
// (hubForgetWorktree), stopping its own session first: calling it is the
// authorization. The tree, its branch, files and provenance stay. A main
// checkout whose linked trees are registered is refused.
func (h *Hub) ForgetWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreeResult, error) {
	res := wtResult(hub.WTOpForget)
	r, e, err := h.resolve(ctx, req, "Name the worktree to forget.")
	if err != nil {
		return hub.WorktreeResult{}, err
	}
	if e != nil {
		return refused(res, e), nil
	}
	c := r.c
	if !c.Registered {
		return refused(res, wtErrorf(hub.WTNotFound, "The worktree is not a workspace.").WithRetry(hub.WTRetryRefresh)), nil
	}
	if c.Main {
		for _, o := range r.checkouts {
			if !o.Main && o.Registered {
				return refused(res, wtErrorf(hub.WTConflict, "Worktrees of this repository are workspaces; forget them first.")), nil
			}
		}
	}
	if h.Running(c.WorkspaceID) {
		if _, err := h.StopWorkspace(ctx, c.WorkspaceID); err != nil {
			return refused(res, wtErrorf(hub.WTStopFailed, "The worktree's session could not be stopped: "+hub.MessageOf(err))), nil
		}
	}
	if _, err := h.ForgetWorkspace(ctx, c.WorkspaceID); err != nil {
		if hub.KindOf(err) == hub.Internal {
			return hub.WorktreeResult{}, err
		}
		return refused(res, wtErrorf(hub.WTConflict, hub.MessageOf(err)).WithRetry(hub.WTRetryRefresh)), nil
	}
	c.Registered, c.WorkspaceID, c.ParentWorkspaceID, c.Running = false, "", "", false
	res.Phase, res.Checkout = hub.WTPhaseComplete, &c
	return res, nil
}
