package service

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// The worktree family's journals. Unlike the folder journals they fence
// nothing but themselves: a create's journal stays pending while its tree
// waits to be registered (register retries it, and recovery completes
// it), and a delete's journal tells recovery whether git removed the
// tree. What a journal guards never half-exists in the registry: a tree
// is registered in one transaction with its provenance and the deletion
// of its create journal, and unregistered in one with the deletion of its
// provenance and of its delete journal.

// worktreeCreateIntent guards a tree being made.
type worktreeCreateIntent struct {
	Version      int    `json:"version"`
	OperationID  string `json:"operationId"`
	User         string `json:"user"`
	RepositoryID string `json:"repositoryId"`
	MainPath     string `json:"mainPath"`
	Path         string `json:"path"`
	Branch       string `json:"branch"`
	SourceRef    string `json:"sourceRef"`
	Stamp        string `json:"stamp"`
	Backend      string `json:"backend,omitempty"` // where the repository is; absent: the Hub's machine
}

// worktreeDeleteIntent guards a tree being removed.
type worktreeDeleteIntent struct {
	Version      int    `json:"version"`
	OperationID  string `json:"operationId"`
	RepositoryID string `json:"repositoryId"`
	MainPath     string `json:"mainPath"`
	Path         string `json:"path"`
	GitDir       string `json:"gitDir"`
	CheckoutID   string `json:"checkoutId"`
	WorkspaceID  string `json:"workspaceId"`
	Backend      string `json:"backend,omitempty"` // where the repository is; absent: the Hub's machine
}

// pendingCreate is a create whose tree git made and the Hub has not
// registered yet.
type pendingCreate struct {
	journal int64
	intent  worktreeCreateIntent
}

// wtPending holds the pending creates, by their tree's place key
// (place.key).
type wtPending struct {
	mu sync.Mutex
	by map[string]pendingCreate
}

func (p *wtPending) put(c pendingCreate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.by == nil {
		p.by = map[string]pendingCreate{}
	}
	p.by[placeKey(c.intent.Backend, c.intent.Path)] = c
}

func (p *wtPending) get(key string) (pendingCreate, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.by[key]
	return c, ok
}

func (p *wtPending) drop(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.by, key)
}

// recoverWorktreeCreate settles a create a previous Hub left pending: a
// tree git never made leaves nothing to do; a tree it made is stamped (if
// the stamp is missing) and registered, as the interrupted create would
// have; a tree that cannot be registered now stays pending, for register
// to retry. It never removes a file.
func (h *Hub) recoverWorktreeCreate(ctx context.Context, j hub.Journal) error {
	var in worktreeCreateIntent
	if decodeIntent(j.Data, &in) != nil || in.Version != journalVersion {
		h.log.LogAttrs(ctx, slog.LevelError, "a worktree journal is invalid; it is kept for an operator", slog.Int64("journal", j.ID))
		return nil
	}
	p := pendingCreate{journal: j.ID, intent: in}
	pl, err := h.placeOf(ctx, in.Backend)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "a worktree journal's machine cannot be reached; the next start settles it",
			slog.Int64("journal", j.ID), slog.Any("err", err))
		return nil
	}
	if _, err := pl.fs.Lstat(in.Path); errors.Is(err, fs.ErrNotExist) {
		// git never made the tree (or it is gone): nothing to register.
		return h.commit(ctx, func(tx *writes) error { return tx.DeleteJournal(j.ID) })
	}
	_, refusal, err := h.completeCreate(ctx, p, false)
	if errors.Is(err, errUnfinishedTree) {
		// A git killed while it made the tree left something no checkout
		// can complete: the create never happened, and nothing has worked
		// in the tree (it was never registered), so it is removed; a
		// branch git made stays.
		if rerr := pl.git.DiscardWorktree(ctx, in.MainPath, in.Path); rerr == nil {
			h.log.LogAttrs(ctx, slog.LevelInfo, "undid a worktree creation git had not finished", slog.String("branch", in.Branch))
			return h.commit(ctx, func(tx *writes) error { return tx.DeleteJournal(j.ID) })
		}
	}
	if err != nil || refusal != nil {
		h.wtPend.put(p)
		h.log.LogAttrs(ctx, slog.LevelWarn, "an interrupted worktree creation waits to be registered",
			slog.String("branch", in.Branch), slog.Any("refusal", refusal), slog.Any("err", err))
	} else {
		h.log.LogAttrs(ctx, slog.LevelInfo, "recovered an interrupted worktree creation", slog.String("branch", in.Branch))
	}
	return nil
}

// recoverWorktreeDelete settles a delete a previous Hub left pending.
// git removes a tree's folder, then its administrative directory: a tree
// whose folder is gone is finished (its administrative directory
// removed, if the kill came between the two) and unregistered with its
// provenance; a tree whose folder is still there, whole or in part, stays
// registered, its journal dropped: the person sees what is left and may
// delete again (a partial tree shows its deleted files as changes, so
// nothing is removed unseen).
func (h *Hub) recoverWorktreeDelete(ctx context.Context, j hub.Journal) error {
	var in worktreeDeleteIntent
	if decodeIntent(j.Data, &in) != nil || in.Version != journalVersion {
		h.log.LogAttrs(ctx, slog.LevelError, "a worktree journal is invalid; it is kept for an operator", slog.Int64("journal", j.ID))
		return nil
	}
	pl, err := h.placeOf(ctx, in.Backend)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "a worktree journal's machine cannot be reached; the next start settles it",
			slog.Int64("journal", j.ID), slog.Any("err", err))
		return nil
	}
	_, errTree := pl.fs.Lstat(in.Path)
	_, errDir := pl.fs.Lstat(in.GitDir)
	switch {
	case errTree != nil && !errors.Is(errTree, fs.ErrNotExist), errDir != nil && !errors.Is(errDir, fs.ErrNotExist):
		h.log.LogAttrs(ctx, slog.LevelWarn, "an interrupted worktree deletion could not be looked at; the next start settles it",
			slog.String("workspace", in.WorkspaceID), slog.Any("err", errors.Join(errTree, errDir)))
		return nil
	case errTree == nil:
		h.log.LogAttrs(ctx, slog.LevelWarn, "an interrupted worktree deletion did not remove the tree; it stays registered",
			slog.String("workspace", in.WorkspaceID))
		return h.commit(ctx, func(tx *writes) error { return tx.DeleteJournal(j.ID) })
	case errDir == nil:
		if in.MainPath == "" {
			return nil // a journal of an older Hub: kept for an operator
		}
		// The files are gone: the tree is, for anyone looking. git's
		// record of it is removed when git still can (a kill in the
		// middle of that removal leaves one git no longer reads, and it
		// lists the tree as prunable); the registration goes either way.
		if err := pl.git.RemoveWorktree(ctx, in.MainPath, in.Path, true); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "git's record of a deleted worktree could not be removed",
				slog.String("workspace", in.WorkspaceID), slog.Any("err", err))
		} else {
			h.log.LogAttrs(ctx, slog.LevelInfo, "finished an interrupted worktree deletion", slog.String("workspace", in.WorkspaceID))
		}
	}
	forget, err := h.unregisterRemoved(ctx, in, j.ID, hub.Workspace{})
	if err == nil && forget != 0 {
		_ = h.removeData(ctx, forget, in.WorkspaceID, pl.name) // logged; its journal stays otherwise
	}
	return err
}

// unregisterRemoved forgets a removed tree: its provenance, its workspace
// (when the registration still names that path) and the delete journal,
// in one transaction. It returns the journal of the workspace's data.
func (h *Hub) unregisterRemoved(ctx context.Context, in worktreeDeleteIntent, journal int64, main hub.Workspace) (forget int64, err error) {
	err = h.commit(ctx, func(tx *writes) error {
		if err := tx.DeleteWorktreeProvenance(in.CheckoutID, main); err != nil {
			return err
		}
		if in.WorkspaceID != "" {
			w, err := tx.Workspace(in.WorkspaceID)
			switch {
			case hub.KindOf(err) == hub.NotFound:
			case err != nil:
				return err
			case w.Path == in.Path:
				if forget, err = h.forgetLocked(tx, in.WorkspaceID); err != nil {
					return err
				}
			}
		}
		return tx.DeleteJournal(journal)
	})
	return forget, err
}
