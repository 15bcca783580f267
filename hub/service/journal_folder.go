package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

// The recovery of folder renames and removals, on the Hub's machine or on
// a host. The disk of the journal's place decides: a rename happened when
// only its destination is there, did not when only its source is, and is
// ambiguous otherwise; a removal happened when its folder is gone. A place
// that cannot say (a host unreachable, a permission denied) decides
// nothing: the journal stays pending.
//
// A journal of the Hub's machine is settled by Recover, before the Hub
// serves. One of a host is settled by resumeHost, in the background of the
// start, once the host answers (hostJournal); until then a folder journal
// is pending and fences changes as a stranded one does (a worktree
// journal fences nothing, on any machine).

// hostJournal is the backend of a folder or worktree journal recorded on
// a host, or "" for one of the Hub's machine (or of another kind).
func hostJournal(j hub.Journal) string {
	var b struct {
		Backend string `json:"backend"`
	}
	switch j.Kind {
	case hub.JournalFolderRename, hub.JournalFolderRemove, hub.JournalWorktreeCreate, hub.JournalWorktreeDelete:
	default:
		return ""
	}
	if json.Unmarshal(j.Data, &b) != nil {
		return "" // settled, as invalid, by recoverJournal
	}
	return b.Backend
}

// folderThere reports whether something is at p on pl; an error other
// than its absence is returned, so recovery decides nothing from it.
func folderThere(pl place, p string) (dir bool, there bool, err error) {
	fi, err := pl.fs.Lstat(p)
	switch {
	case err == nil:
		return fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, false, nil
	}
	return false, false, err
}

// settleFolder settles a folder rename or removal journal on pl. It
// returns why it could not, or "" once the journal is deleted.
func (h *Hub) settleFolder(ctx context.Context, pl place, j hub.Journal) (unresolved string, err error) {
	log := h.log.With(slog.Int64("journal", j.ID), slog.String("kind", string(j.Kind)), slog.String("backend", pl.name))
	if j.Kind == hub.JournalFolderRemove {
		return h.settleRemove(ctx, pl, j, log)
	}
	var in renameIntent
	if decodeIntent(j.Data, &in) != nil || in.Version != journalVersion || in.Backend != pl.journalName() {
		return "journal is invalid", nil
	}
	src, _, serr := folderThere(pl, in.Source)
	dst, _, derr := folderThere(pl, in.Destination)
	if err := errors.Join(serr, derr); err != nil {
		return fmt.Sprintf("pending folder rename: its folders could not be looked at: %v", err), nil
	}
	var after bool
	switch {
	case dst && !src:
		after = true
	case src && !dst:
		after = false
	default:
		return fmt.Sprintf("ambiguous pending folder rename: source present %v, destination present %v", src, dst), nil
	}
	err = h.commit(ctx, func(tx *writes) error {
		for _, e := range in.Entries {
			w, err := tx.Workspace(e.WorkspaceID)
			if hub.KindOf(err) == hub.NotFound {
				continue
			} else if err != nil {
				return err
			}
			w.Path = e.Before
			if after {
				w.Path = e.After
			}
			if err := tx.UpdateWorkspace(w); err != nil {
				return err
			}
		}
		return tx.DeleteJournal(j.ID)
	})
	if err == nil {
		log.Info("recovered an interrupted folder rename", slog.Bool("renamed", after))
	}
	return "", err
}

// settleRemove is settleFolder of a removal.
func (h *Hub) settleRemove(ctx context.Context, pl place, j hub.Journal, log *slog.Logger) (string, error) {
	var in removeIntent
	if decodeIntent(j.Data, &in) != nil || in.Version != journalVersion || in.Backend != pl.journalName() {
		return "journal is invalid", nil
	}
	_, there, err := folderThere(pl, in.Path)
	if err != nil {
		return fmt.Sprintf("pending folder removal: its folder could not be looked at: %v", err), nil
	}
	removed := !there
	var forget int64
	err = h.commit(ctx, func(tx *writes) error {
		if removed {
			var err error
			forget, err = h.forgetLocked(tx, in.WorkspaceID)
			if err != nil && hub.KindOf(err) != hub.NotFound {
				return err
			}
		}
		return tx.DeleteJournal(j.ID)
	})
	if err == nil {
		log.Info("recovered an interrupted folder removal", slog.Bool("removed", removed))
		if forget != 0 {
			_ = h.removeData(ctx, forget, in.WorkspaceID, pl.name) // logged; the journal stays otherwise
		}
	}
	return "", err
}
