package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

// A journal records the intent of a change that touches folders on disk.
// It is stored before the disk is touched and deleted once the disk and the
// registry agree. A journal its operation could not delete is stranded: it
// fences further changes (fence) until the next Hub start recovers it.

const journalVersion = 1

// onboardingIntent guards a registration: for create-new, the new folder
// and its `git init`; for the others, `git init` of an existing folder.
type onboardingIntent struct {
	Version       int    `json:"version"`
	Operation     string `json:"operation"` // register, configure-existing, create-new
	WorkspaceID   string `json:"workspaceId"`
	Path          string `json:"path"`
	Backend       string `json:"backend,omitempty"` // where Path is; absent: the Hub's machine
	CreatedFolder bool   `json:"createdFolder"`
}

// renameIntent guards the rename of a folder holding registered workspaces.
type renameIntent struct {
	Version     int           `json:"version"`
	Source      string        `json:"source"`
	Destination string        `json:"destination"`
	Entries     []renameEntry `json:"entries"`
	Backend     string        `json:"backend,omitempty"` // where the folder is; absent: the Hub's machine
}

type renameEntry struct {
	WorkspaceID string `json:"workspaceId"`
	Before      string `json:"before"`
	After       string `json:"after"`
}

// removeIntent guards the removal of a registered workspace's folder.
type removeIntent struct {
	Version     int    `json:"version"`
	Path        string `json:"path"`
	WorkspaceID string `json:"workspaceId"`
	Backend     string `json:"backend,omitempty"` // where the folder is; absent: the Hub's machine
}

// forgetIntent guards the removal of a forgotten workspace's data.
type forgetIntent struct {
	Version     int    `json:"version"`
	WorkspaceID string `json:"workspaceId"`
	Backend     string `json:"backend,omitempty"` // where the data is; absent: the Hub's machine
}

// forgetLocked deletes workspace id from the registry within tx and, in
// the same transaction, records the journal that has its data removed
// (removeData): a crash leaves either the workspace registered with its
// data, or forgotten with its data gone or going at the next start.
func (h *Hub) forgetLocked(tx *writes, id string) (journal int64, err error) {
	w, err := tx.Workspace(id)
	if err != nil {
		return 0, err
	}
	if err := tx.DeleteWorkspace(id); err != nil {
		return 0, err
	}
	in := forgetIntent{Version: journalVersion, WorkspaceID: id}
	if w.Backend != hub.LocalBackend {
		in.Backend = w.Backend
	}
	data, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	return tx.AddJournal(hub.Journal{Kind: hub.JournalForget, Data: data, CreatedAt: h.clock.Now()})
}

// removeData removes the data of the forgotten workspace id from its
// backend, then deletes its journal. A failure is logged and leaves the
// journal for the next start to try again; it fences nothing, since no
// operation depends on the data being gone. Data on a host removed since
// is left there: the Hub no longer reaches it.
func (h *Hub) removeData(ctx context.Context, journal int64, id, backend string) error {
	ctx = context.WithoutCancel(ctx)
	pl, err := h.placeOf(ctx, backend)
	if hub.KindOf(err) == hub.Invalid {
		h.log.LogAttrs(ctx, slog.LevelWarn, "a forgotten workspace's data is left on a host removed since",
			slog.String("workspace", id), slog.String("backend", backend))
		return h.commit(ctx, func(tx *writes) error { return tx.DeleteJournal(journal) })
	}
	if err == nil {
		err = pl.backend.RemoveWorkspaceData(ctx, id)
	}
	if err == nil {
		err = h.commit(ctx, func(tx *writes) error { return tx.DeleteJournal(journal) })
	}
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "a forgotten workspace's data could not be removed; the next start tries again",
			slog.String("workspace", id), slog.Any("err", err))
	}
	return err
}

// openJournal stores a journal of kind for intent and returns its id.
func (h *Hub) openJournal(ctx context.Context, kind hub.JournalKind, intent any) (int64, error) {
	data, err := json.Marshal(intent)
	if err != nil {
		return 0, hub.Wrap(hub.Internal, err, "recovery journal could not be written")
	}
	var id int64
	err = h.commit(ctx, func(tx *writes) error {
		var err error
		id, err = tx.AddJournal(hub.Journal{Kind: kind, Data: data, CreatedAt: h.clock.Now()})
		return err
	})
	if err != nil {
		return 0, hub.Wrap(hub.Internal, err, "recovery journal could not be written")
	}
	return id, nil
}

// closeJournal deletes a journal whose change is complete or undone. If it
// cannot, the journal is stranded and fences further changes.
func (h *Hub) closeJournal(ctx context.Context, id int64, kind hub.JournalKind) error {
	err := h.commit(context.WithoutCancel(ctx), func(tx *writes) error { return tx.DeleteJournal(id) })
	if err != nil {
		h.strand(id, kind, err)
	}
	return err
}

// strand records a journal left pending.
func (h *Hub) strand(id int64, kind hub.JournalKind, why error) {
	h.log.LogAttrs(context.Background(), slog.LevelError,
		"a recovery journal is pending; folder and workspace changes are refused until the Hub restarts and recovers it",
		slog.Int64("journal", id), slog.String("kind", string(kind)), slog.Any("err", why))
	h.mu.Lock()
	h.stranded[id] = kind
	h.mu.Unlock()
}

// await records a folder journal of a host, pending until resumeHost
// settles it; it fences as a stranded one meanwhile.
func (h *Hub) await(id int64, kind hub.JournalKind) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.awaiting[id] = kind
}

// settled ends the wait for journal id: it was settled (ok), or it is
// stranded now, until a later start, for the reason why.
func (h *Hub) settled(id int64, ok bool, why error) {
	h.mu.Lock()
	kind, waited := h.awaiting[id]
	delete(h.awaiting, id)
	h.mu.Unlock()
	if waited && !ok {
		h.strand(id, kind, why)
	}
}

// fenceOp names the operations a stranded journal refuses.
type fenceOp int

const (
	fenceStart     fenceOp = iota // session starts
	fenceFolder                   // folder create, rename, remove
	fenceRegister                 // registrations: legacy, configure, create
	fenceWorkspace                // display-name changes, forget
	fenceAssign                   // credential assignment changes
)

// fence refuses op while a journal is stranded, with the contract's texts.
func (h *Hub) fence(op fenceOp) error {
	h.mu.Lock()
	var onboarding, folder bool
	for _, k := range h.stranded {
		if k == hub.JournalOnboarding {
			onboarding = true
		} else {
			folder = true
		}
	}
	// A host's journal awaiting its host fences every change but session
	// starts: its workspaces' locks are held while it is settled, so a
	// start of one of them waits for that, and no other workspace's path
	// depends on it.
	folder = folder || len(h.awaiting) > 0 && op != fenceStart
	h.mu.Unlock()
	if !onboarding && !folder {
		return nil
	}
	var msg string
	switch op {
	case fenceStart:
		msg = "a pending recovery journal requires Hub recovery before further folder changes"
		if onboarding {
			msg = "a pending onboarding requires Hub recovery before session starts"
		}
	case fenceFolder:
		msg = "a pending recovery journal requires Hub recovery before further folder changes"
	case fenceRegister:
		msg = "a pending recovery journal requires Hub recovery before new workspace changes"
	case fenceWorkspace:
		msg = "a pending recovery journal requires Hub recovery before further workspace changes"
	case fenceAssign:
		msg = "a pending recovery journal requires Hub recovery before credential assignment changes"
		if onboarding {
			msg = "a pending onboarding requires Hub recovery before credential assignment changes"
		}
	}
	return hub.Errorf(hub.Conflict, "%s", msg)
}

// PendingJournals reports how many journals are stranded or await their
// host, for operators: while any is, folder changes are refused and the
// Hub is not ready.
func (h *Hub) PendingJournals() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.stranded) + len(h.awaiting)
}

// AwaitingHosts reports how many of PendingJournals await a host the Hub
// is reaching in the background of its start: those settle by
// themselves once it answers.
func (h *Hub) AwaitingHosts() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.awaiting)
}

// Recover completes or undoes every journal a previous Hub left pending,
// then starts again the sessions that were running when it stopped. Call it
// once, before serving. A journal whose outcome cannot be decided from the
// disk stays pending and fences changes (the log says which and why); a
// store failure is returned.
func (h *Hub) Recover(ctx context.Context) error {
	var js []hub.Journal
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		js, err = tx.Journals()
		return err
	}); err != nil {
		return err
	}
	var marks []hub.ActivityMark
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		marks, err = tx.ActivityMarks()
		return err
	}); err != nil {
		return fmt.Errorf("load activity marks: %w", err)
	}
	h.live.RestoreMarks(marks)
	onHosts := map[string][]hub.Journal{} // settled by resumeHost
	for _, j := range js {
		if b := hostJournal(j); b != "" {
			// Pending until the host answers; a folder journal fences
			// meanwhile.
			onHosts[b] = append(onHosts[b], j)
			if j.Kind == hub.JournalFolderRename || j.Kind == hub.JournalFolderRemove {
				h.await(j.ID, j.Kind)
			}
			h.log.LogAttrs(ctx, slog.LevelInfo, "a folder journal waits for its host to answer",
				slog.Int64("journal", j.ID), slog.String("backend", b))
			continue
		}
		unresolved, err := h.recoverJournal(ctx, j)
		if err != nil {
			return fmt.Errorf("recover journal %d (%s): %w", j.ID, j.Kind, err)
		}
		if unresolved != "" {
			h.strand(j.ID, j.Kind, fmt.Errorf("%s", unresolved))
		} else {
			h.counters.journalsRecovered.Add(1)
		}
	}
	if err := h.unlockAtStart(ctx); err != nil {
		return fmt.Errorf("load credentials: %w", err)
	}
	if err := h.push.load(ctx); err != nil {
		return fmt.Errorf("load notifications: %w", err)
	}
	if err := h.autostart(ctx, onHosts); err != nil {
		return err
	}
	h.ready.recovered.Store(true)
	return nil
}

// recoverJournal settles one journal. It returns why the journal could not
// be settled, or "" once it is deleted.
func (h *Hub) recoverJournal(ctx context.Context, j hub.Journal) (unresolved string, err error) {
	log := h.log.With(slog.Int64("journal", j.ID), slog.String("kind", string(j.Kind)))
	switch j.Kind {
	case hub.JournalOnboarding:
		var in onboardingIntent
		if decodeIntent(j.Data, &in) != nil || in.Version != journalVersion {
			return "journal is invalid", nil
		}
		// Registration commits in one transaction, so it either happened
		// or left nothing; a folder it created is kept either way.
		return "", h.commit(ctx, func(tx *writes) error {
			w, err := tx.Workspace(in.WorkspaceID)
			committed := err == nil && w.Path == in.Path
			log.Info("recovered an interrupted onboarding", slog.String("workspace", in.WorkspaceID),
				slog.Bool("registered", committed), slog.Bool("createdFolder", in.CreatedFolder))
			return tx.DeleteJournal(j.ID)
		})
	case hub.JournalFolderRename, hub.JournalFolderRemove:
		return h.settleFolder(ctx, h.here, j)
	case hub.JournalForget:
		var in forgetIntent
		if decodeIntent(j.Data, &in) != nil || in.Version != journalVersion {
			return "journal is invalid", nil
		}
		if h.removeData(ctx, j.ID, in.WorkspaceID, in.Backend) == nil {
			log.Info("removed the data of a forgotten workspace", slog.String("workspace", in.WorkspaceID))
		}
		return "", nil // pending until its data is gone, fencing nothing
	case hub.JournalWorktreeCreate:
		return "", h.recoverWorktreeCreate(ctx, j) // pending until registered, fencing nothing
	case hub.JournalWorktreeDelete:
		return "", h.recoverWorktreeDelete(ctx, j)
	}
	return "journal kind is unknown", nil
}

// decodeIntent reads a journal strictly: a journal this Hub did not write
// exactly is not trusted to steer recovery.
func decodeIntent(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// autostart starts the sessions of workspaces that were running when the
// Hub last stopped. A failure is logged and leaves that workspace stopped.
// Those on hosts are resumed in the background (resumeHost), after the
// folder journals left pending there (journals) are settled.
func (h *Hub) autostart(ctx context.Context, journals map[string][]hub.Journal) error {
	ws, err := h.registry(ctx)
	if err != nil {
		return err
	}
	onHosts := map[string][]hub.Workspace{}
	for _, w := range ws {
		if w.Backend != hub.LocalBackend {
			onHosts[w.Backend] = append(onHosts[w.Backend], w)
			continue
		}
		if !w.AutoStart {
			continue
		}
		if err := h.restart(ctx, w); err != nil {
			return err
		}
	}
	for backend := range journals {
		if _, ok := onHosts[backend]; !ok {
			onHosts[backend] = nil
		}
	}
	for backend, ws := range onHosts {
		h.watchers.Add(1)
		go h.resumeHost(backend, ws, journals[backend])
	}
	return nil
}

// restart starts w again at the Hub's start; a start that fails is
// logged, and w recorded as stopped unless it already runs.
func (h *Hub) restart(ctx context.Context, w hub.Workspace) error {
	_, err := h.StartWorkspace(ctx, w.ID)
	if err == nil {
		return nil
	}
	h.log.LogAttrs(ctx, slog.LevelWarn, "could not restart a workspace that was running",
		slog.String("workspace", w.ID), slog.Any("err", err))
	if hub.KindOf(err) == hub.Conflict {
		return nil
	}
	return h.setAutoStart(ctx, w.ID, false)
}
