package service

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// Deleting worktrees. A tree's files are removed only when every check
// passed three times — when the delete begins, once its session is
// stopped, and immediately before git runs — and its local data still
// has the fingerprint the person confirmed each time. The branch is
// never touched.

// wtCheck is one check of a tree for deletion.
type wtCheck struct {
	r         resolved
	gitDir    string
	localData *hub.LocalData
}

// checkDelete reads the family again, finds the same checkout (by id)
// and asks the rules for the one blocker; local data is summarized when
// none blocks.
func (h *Hub) checkDelete(ctx context.Context, req hub.WorktreeRequest, checkoutID string) (wtCheck, *hub.WorktreeError, error) {
	var ch wtCheck
	r, e, err := h.resolve(ctx, req, "Name the worktree to delete.")
	if err != nil || e != nil {
		return ch, e, err
	}
	if checkoutID != "" && r.c.CheckoutID != checkoutID {
		return ch, wtErrorf(hub.WTIdentityUncertain, "The worktree changed identity while deletion was prepared. Nothing was removed.").WithRetry(hub.WTRetryRefresh), nil
	}
	ch.r = r
	facts := worktree.DeleteFacts{Checkout: r.c, NestedWorktree: nestedIn(r.c.Path, r.checkouts)}
	for _, e := range r.f.listing.Entries {
		if !e.Main && r.f.pl.canonical(e.Path) == r.c.Path {
			facts.Listed, ch.gitDir = true, e.GitDir
		}
	}
	if facts.Listed && r.c.Availability == hub.WTPresent {
		facts.Tree, facts.TreeErr = r.f.pl.git.InspectTree(ctx, r.c.Path)
		if facts.TreeErr != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "a worktree could not be inspected", slog.Any("err", facts.TreeErr))
		}
	}
	if e := worktree.Blocker(facts); e != nil {
		return ch, e, nil
	}
	ch.localData = worktree.Summarize(r.c.CheckoutID, facts.Tree.Entries)
	return ch, nil, nil
}

// PreflightDeleteWorktree says whether a tree could be deleted now
// (hubPreflightDeleteWorktree): the one blocker, or that nothing blocks,
// whether its session must be stopped and what local data deleting it
// would lose. It changes nothing.
func (h *Hub) PreflightDeleteWorktree(ctx context.Context, caller hub.DeviceSession, req hub.WorktreeRequest) (hub.WorktreePreflight, *hub.WorktreeError, error) {
	ch, e, err := h.checkDelete(ctx, req, "")
	if err != nil {
		return hub.WorktreePreflight{}, nil, err
	}
	if e != nil {
		return hub.WorktreePreflight{Checkout: ch.r.c}, sanitized(e), nil
	}
	return hub.WorktreePreflight{Checkout: ch.r.c, RequiresStop: ch.r.c.Running, LocalData: ch.localData}, nil, nil
}

// DeleteWorktree deletes a linked tree the Hub created (hubDeleteWorktree):
// its files through `git worktree remove` (one --force only when the
// confirmed local data holds changes or untracked files), then its
// provenance and its workspace. The branch is kept.
func (h *Hub) DeleteWorktree(ctx context.Context, caller hub.DeviceSession, req hub.DeleteWorktreeRequest) (hub.WorktreeResult, error) {
	res := wtResult(hub.WTOpDelete)
	res.Phase = hub.WTPhasePreflight
	refuse := func(e *hub.WorktreeError) (hub.WorktreeResult, error) {
		res = refused(res, e)
		res.Error.Phase = res.Phase
		return res, nil
	}
	if !req.Confirm {
		return refuse(wtErrorf(hub.WTInvalidInput, "Confirm deletion to continue. Nothing was removed."))
	}
	if req.LocalDataFingerprint != "" && !worktree.ValidFingerprint(req.LocalDataFingerprint) {
		return refuse(wtErrorf(hub.WTInvalidInput, "The local-data fingerprint is malformed. Nothing was removed."))
	}
	ch, e, err := h.checkDelete(ctx, req.WorktreeRequest, "")
	if err != nil {
		return hub.WorktreeResult{}, err
	}
	if e != nil {
		return refuse(e)
	}
	res.Checkout = &ch.r.c
	unlock, err := h.wtLocks.Lock(ctx, ch.r.f.repoID)
	if err != nil {
		return hub.WorktreeResult{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	defer unlock()
	// The first check, under the repository's lock.
	id := ch.r.c.CheckoutID
	if ch, e, err = h.checkDelete(ctx, req.WorktreeRequest, id); err != nil {
		return hub.WorktreeResult{}, err
	} else if e != nil {
		return refuse(e)
	}
	c, pl := ch.r.c, ch.r.f.pl
	if c.Running && !req.Stop {
		return refuse(wtErrorf(hub.WTConflict, "This worktree is running. Choose Stop and delete to stop it first. Nothing was removed."))
	}
	if e := worktree.CheckLocalData(ch.localData, req.LocalDataFingerprint); e != nil {
		return refuse(e)
	}

	res.Phase = hub.WTPhaseFencing
	release, err := h.reserved.reserve(pl.key(c.Path))
	if err != nil {
		return refuse(wtErrorf(hub.WTConflict, "Another operation is changing this folder. Try again when it is done. Nothing was removed.").WithRetry(hub.WTRetryRefresh))
	}
	defer release()
	if c.Registered {
		unlockWS, err := h.wsLocks.Lock(ctx, c.WorkspaceID)
		if err != nil {
			return hub.WorktreeResult{}, hub.Wrap(hub.Unavailable, err, "request cancelled")
		}
		defer unlockWS()
		if h.Running(c.WorkspaceID) {
			if !req.Stop {
				return refuse(wtErrorf(hub.WTConflict, "This worktree is running. Choose Stop and delete to stop it first. Nothing was removed."))
			}
			res.Phase = hub.WTPhaseStopping
			if _, err := h.stopLocked(ctx, c.WorkspaceID); err != nil {
				return refuse(wtErrorf(hub.WTStopFailed, "The worktree's session could not be stopped. Nothing was removed."))
			}
		}
	}

	res.Phase = hub.WTPhaseRechecking
	if ch, e, err = h.checkDelete(ctx, req.WorktreeRequest, id); err != nil {
		return hub.WorktreeResult{}, err
	} else if e != nil {
		return refuse(e)
	}
	if e := worktree.CheckLocalData(ch.localData, req.LocalDataFingerprint); e != nil {
		return refuse(e)
	}
	in := worktreeDeleteIntent{Version: journalVersion, OperationID: res.OperationID, RepositoryID: ch.r.f.repoID,
		MainPath: ch.r.f.mainPath, Path: c.Path, GitDir: ch.gitDir, CheckoutID: id, WorkspaceID: c.WorkspaceID,
		Backend: pl.journalName()}
	jid, err := h.openJournal(ctx, hub.JournalWorktreeDelete, in)
	if err != nil {
		return hub.WorktreeResult{}, err
	}

	res.Phase = hub.WTPhaseRemoving
	// The last check, immediately before git runs.
	if ch, e, err = h.checkDelete(ctx, req.WorktreeRequest, id); err != nil || e != nil {
		_ = h.closeWorktreeJournal(ctx, jid)
		if err != nil {
			return hub.WorktreeResult{}, err
		}
		return refuse(e)
	}
	if e := worktree.CheckLocalData(ch.localData, req.LocalDataFingerprint); e != nil {
		_ = h.closeWorktreeJournal(ctx, jid)
		return refuse(e)
	}
	if err := pl.git.RemoveWorktree(ctx, ch.r.f.mainPath, c.Path, worktree.NeedsForce(ch.localData)); err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "git worktree remove failed", slog.Any("err", err))
		if errors.Is(err, context.DeadlineExceeded) && (pl.present(c.Path) || pl.present(ch.gitDir)) {
			_ = h.closeWorktreeJournal(ctx, jid)
			return refuse(wtErrorf(hub.WTTimeout, "Git took too long to remove the worktree; some of its files may already be deleted.").WithRetry(hub.WTRetryRefresh))
		}
		if pl.present(c.Path) || pl.present(ch.gitDir) {
			_ = h.closeWorktreeJournal(ctx, jid)
			return refuse(wtErrorf(hub.WTConflict, "Git did not remove the worktree; some of its files may already be deleted.").WithRetry(hub.WTRetryRefresh))
		}
	}
	if pl.present(c.Path) || pl.present(ch.gitDir) {
		_ = h.closeWorktreeJournal(ctx, jid)
		return refuse(wtErrorf(hub.WTConflict, "Git reported the worktree removed, but its folder is still there.").WithRetry(hub.WTRetryRefresh))
	}

	res.Phase = hub.WTPhaseUnregistering
	forget, err := h.unregisterRemoved(ctx, in, jid, ch.r.f.main)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "a removed worktree could not be unregistered", slog.Any("err", err))
		h.live.AnnounceWorktrees(nil, ch.r.f.main)
		return refuse(wtErrorf(hub.WTInternal, "The worktree's files were removed, but it could not be unregistered.").WithRetry(hub.WTRetryDelete))
	}
	if forget != 0 {
		_ = h.removeData(ctx, forget, c.WorkspaceID, pl.name) // logged; its journal stays otherwise
	}
	c.Registered, c.WorkspaceID, c.ParentWorkspaceID, c.Running = false, "", "", false
	res.Phase, res.Checkout, res.Registered, res.Started = hub.WTPhaseComplete, &c, false, false
	return res, nil
}

// present reports whether anything is at p on pl (an error other than
// "not there" counts as present: nothing is taken for gone unproven).
func (pl place) present(p string) bool {
	if p == "" {
		return false
	}
	_, err := pl.fs.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}
