package service

import (
	"context"
	"errors"
	"path"
	"slices"
	"sort"

	"github.com/wharfhub/wharf/hub"
)

// Folder mutations change directories on the Hub's machine or on a
// configured host (the place their backend names). They never replace
// anything, never recurse, and keep the registry in step with the disk:
// renaming or removing a folder that holds registered workspaces is
// journaled, the journal naming the place, and runs under the locks of
// every affected workspace. All folder mutations are serialized.

// stopConflict is the FolderStopConflict refusal.
func stopConflict(ids []string) error {
	ids = slices.Clone(ids)
	sort.Strings(ids)
	return &hub.Error{Kind: hub.Conflict, Message: "affected workspace sessions must be stopped",
		Details: &hub.Details{StopConflict: true, WorkspaceIDs: ids}}
}

// sourceFolder validates the folder an operation changes on pl and
// returns its canonical path.
func sourceFolder(pl place, p string) (string, error) {
	p, err := absPath(p, "path must be an absolute path")
	if err != nil {
		return "", err
	}
	return pl.directDir(p, "folder path")
}

// CreateFolder makes one new folder under parent, on the machine of
// backend ("" or local: the Hub's; ssh:<host>: a configured host's). It
// never registers it.
func (h *Hub) CreateFolder(ctx context.Context, backend, parent, name string) (string, error) {
	parent, err := absPath(parent, "parent must be an absolute path")
	if err != nil {
		return "", err
	}
	if err := hub.CheckFolderName("name", name); err != nil {
		return "", err
	}
	if _, err := child(parent, name); err != nil {
		return "", err
	}
	pl, err := h.placeOf(ctx, backend)
	if err != nil {
		return "", err
	}
	h.folderMu.Lock()
	defer h.folderMu.Unlock()
	if err := h.fence(fenceFolder); err != nil {
		return "", err
	}
	if parent, err = pl.directDir(parent, "parent"); err != nil {
		return "", err
	}
	dest, err := child(parent, name)
	if err != nil {
		return "", err
	}
	release, err := h.reserved.reserve(pl.key(dest))
	if err != nil {
		return "", err
	}
	defer release()
	if pl.exists(dest) {
		return "", hub.Errorf(hub.Conflict, "destination already exists")
	}
	if err := h.unclaimed(ctx, pl.name, dest); err != nil {
		return "", err
	}
	if err := pl.fs.Mkdir(dest); err != nil {
		return "", fsError(err, "folder creation failed")
	}
	return dest, nil
}

// lockAffected locks the workspaces registered at or below root, then
// reads them again under their locks (a forget or rename may have won).
// With stop it stops the running ones; without, running ones refuse the
// operation with a FolderStopConflict.
func (h *Hub) lockAffected(ctx context.Context, pl place, root string, exact, stop bool) (ws []hub.Workspace, unlock func(), err error) {
	find := func() ([]hub.Workspace, error) {
		var ws []hub.Workspace
		err := h.store.View(ctx, func(tx hub.Tx) error {
			if exact {
				w, ok, err := workspaceAt(tx, pl.name, root)
				if ok {
					ws = []hub.Workspace{w}
				}
				return err
			}
			var err error
			ws, err = workspacesAtOrBelow(tx, pl.name, root)
			return err
		})
		return ws, err
	}
	ws, err = find()
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	unlock, err = h.wsLocks.LockAll(ctx, ids)
	if err != nil {
		return nil, nil, hub.Wrap(hub.Unavailable, err, "request cancelled")
	}
	if ws, err = find(); err != nil {
		unlock()
		return nil, nil, err
	}
	var running []string
	for _, w := range ws {
		if !slices.Contains(ids, w.ID) {
			unlock() // registered meanwhile: not ours to decide
			return nil, nil, hub.Errorf(hub.Conflict, "folder operation conflicts with a registered workspace path")
		}
		if h.workspaceSession(w.ID) != nil {
			running = append(running, w.ID)
		}
	}
	if len(running) > 0 && !stop {
		unlock()
		return nil, nil, stopConflict(running)
	}
	for _, id := range running {
		if _, err := h.stopLocked(ctx, id); err != nil {
			unlock()
			return nil, nil, err
		}
	}
	return ws, unlock, nil
}

// RenameFolder gives the folder at p, on the machine of backend (as
// CreateFolder's), the new name, in the same parent. The paths of
// workspaces registered at or below it follow; their ids, names,
// personal state and assignments stay. stop authorizes stopping their
// sessions first.
func (h *Hub) RenameFolder(ctx context.Context, backend, p, name string, stop bool) (hub.RenameResult, error) {
	if _, err := absPath(p, "path must be an absolute path"); err != nil {
		return hub.RenameResult{}, err
	}
	if err := hub.CheckFolderName("name", name); err != nil {
		return hub.RenameResult{}, err
	}
	pl, err := h.placeOf(ctx, backend)
	if err != nil {
		return hub.RenameResult{}, err
	}
	h.folderMu.Lock()
	defer h.folderMu.Unlock()
	if err := h.fence(fenceFolder); err != nil {
		return hub.RenameResult{}, err
	}
	src, err := sourceFolder(pl, p)
	if err != nil {
		return hub.RenameResult{}, err
	}
	dest, err := child(path.Dir(src), name)
	if err != nil {
		return hub.RenameResult{}, err
	}
	if dest == src {
		return hub.RenameResult{}, hub.Errorf(hub.Conflict, "source and destination are the same folder")
	}
	release, err := h.reserved.reserve(pl.key(src), pl.key(dest))
	if err != nil {
		return hub.RenameResult{}, err
	}
	defer release()
	if pl.exists(dest) {
		return hub.RenameResult{}, hub.Errorf(hub.Conflict, "destination already exists")
	}
	if err := h.unclaimed(ctx, pl.name, dest); err != nil {
		return hub.RenameResult{}, err
	}
	ws, unlock, err := h.lockAffected(ctx, pl, src, false, stop)
	if err != nil {
		return hub.RenameResult{}, err
	}
	defer unlock()
	res := hub.RenameResult{Path: dest, WorkspaceIDs: []string{}}
	if len(ws) == 0 {
		if err := pl.fs.RenameNoReplace(src, dest); err != nil {
			return hub.RenameResult{}, fsError(err, "folder rename failed")
		}
		return res, nil
	}
	in := renameIntent{Version: journalVersion, Source: src, Destination: dest, Backend: pl.journalName()}
	for _, w := range ws {
		in.Entries = append(in.Entries, renameEntry{WorkspaceID: w.ID, Before: w.Path, After: rebase(w.Path, src, dest)})
		res.WorkspaceIDs = append(res.WorkspaceIDs, w.ID)
	}
	jid, err := h.openJournal(ctx, hub.JournalFolderRename, in)
	if err != nil {
		return hub.RenameResult{}, err
	}
	if err := pl.fs.RenameNoReplace(src, dest); err != nil {
		h.closeJournal(ctx, jid, hub.JournalFolderRename)
		return hub.RenameResult{}, fsError(err, "registered folder rename failed")
	}
	err = h.commit(ctx, func(tx *writes) error {
		for _, e := range in.Entries {
			w, err := tx.Workspace(e.WorkspaceID)
			if err != nil {
				return err
			}
			w.Path = e.After
			if err := tx.UpdateWorkspace(w); err != nil {
				return err
			}
		}
		return tx.DeleteJournal(jid)
	})
	if err != nil {
		// Put the folder back so disk and registry agree again; if even
		// that fails, the journal stays for recovery.
		if rerr := pl.fs.RenameNoReplace(dest, src); rerr != nil {
			h.strand(jid, hub.JournalFolderRename, errors.Join(err, rerr))
			return hub.RenameResult{}, hub.Wrap(hub.Internal, err, "registered folder rename failed and recovery is required")
		}
		h.closeJournal(ctx, jid, hub.JournalFolderRename)
		return hub.RenameResult{}, hub.Wrap(hub.Internal, err, "registered folder rename failed")
	}
	return res, nil
}

// RemoveFolder removes the empty folder at p, on the machine of backend
// (as CreateFolder's). A workspace registered exactly there is forgotten
// with it; stop authorizes stopping its session first.
func (h *Hub) RemoveFolder(ctx context.Context, backend, p string, stop bool) (hub.RemoveResult, error) {
	if _, err := absPath(p, "path must be an absolute path"); err != nil {
		return hub.RemoveResult{}, err
	}
	pl, err := h.placeOf(ctx, backend)
	if err != nil {
		return hub.RemoveResult{}, err
	}
	h.folderMu.Lock()
	defer h.folderMu.Unlock()
	if err := h.fence(fenceFolder); err != nil {
		return hub.RemoveResult{}, err
	}
	src, err := sourceFolder(pl, p)
	if err != nil {
		return hub.RemoveResult{}, err
	}
	release, err := h.reserved.reserve(pl.key(src))
	if err != nil {
		return hub.RemoveResult{}, err
	}
	defer release()
	// Refuse a folder with content before stopping anything for it; the
	// removal itself still refuses one that gains content meanwhile.
	if entries, err := pl.fs.ReadDir(src); err != nil {
		return hub.RemoveResult{}, fsError(err, "folder removal failed")
	} else if len(entries) > 0 {
		return hub.RemoveResult{}, hub.Errorf(hub.Conflict, "folder is not empty")
	}
	ws, unlock, err := h.lockAffected(ctx, pl, src, true, stop)
	if err != nil {
		return hub.RemoveResult{}, err
	}
	defer unlock()
	if len(ws) == 0 {
		if err := pl.fs.RemoveEmpty(src); err != nil {
			return hub.RemoveResult{}, fsError(err, "folder removal failed")
		}
		return hub.RemoveResult{Path: src}, nil
	}
	w := ws[0]
	jid, err := h.openJournal(ctx, hub.JournalFolderRemove, removeIntent{Version: journalVersion, Path: src, WorkspaceID: w.ID, Backend: pl.journalName()})
	if err != nil {
		return hub.RemoveResult{}, err
	}
	if err := pl.fs.RemoveEmpty(src); err != nil {
		h.closeJournal(ctx, jid, hub.JournalFolderRemove)
		return hub.RemoveResult{}, fsError(err, "folder removal failed")
	}
	var forget int64
	err = h.commit(ctx, func(tx *writes) error {
		var err error
		if forget, err = h.forgetLocked(tx, w.ID); err != nil {
			return err
		}
		return tx.DeleteJournal(jid)
	})
	if err != nil {
		// The folder is gone; recovery finishes the forget at the next start.
		h.strand(jid, hub.JournalFolderRemove, err)
		return hub.RemoveResult{}, hub.Wrap(hub.Internal, err, "registered folder removal requires recovery")
	}
	_ = h.removeData(ctx, forget, w.ID, w.Backend) // logged; the next start tries again
	return hub.RemoveResult{Path: src, WorkspaceID: w.ID}, nil
}
