package sqlite

import (
	"database/sql"
	"errors"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the workspace registry and the recovery journals
// (migration 0002).

const workspaceCols = `id, path, display_name, backend, auto_start, registered_at`

func scanWorkspace(sc scanner) (hub.Workspace, error) {
	var w hub.Workspace
	var registered int64
	if err := sc.Scan(&w.ID, &w.Path, &w.DisplayName, &w.Backend, &w.AutoStart, &registered); err != nil {
		return hub.Workspace{}, err
	}
	w.RegisteredAt = fromNanos(registered)
	return w, nil
}

func (t *tx) Workspaces() ([]hub.Workspace, error) {
	return queryAll(t, scanWorkspace, `SELECT `+workspaceCols+` FROM workspaces ORDER BY seq`)
}

func (t *tx) Workspace(id string) (hub.Workspace, error) {
	w, err := scanWorkspace(t.queryRow(`SELECT `+workspaceCols+` FROM workspaces WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return hub.Workspace{}, hub.Errorf(hub.NotFound, "workspace %q not found", id)
	}
	if err != nil {
		return hub.Workspace{}, internal(err)
	}
	return w, nil
}

func (t *tx) WorkspaceIDUsed(id string) (bool, error) {
	return t.exists(`SELECT EXISTS (SELECT 1 FROM workspace_ids WHERE id = ?)`, id)
}

// exists runs a query answering one boolean.
func (t *tx) exists(q string, args ...any) (bool, error) {
	var ok bool
	if err := t.queryRow(q, args...).Scan(&ok); err != nil {
		return false, internal(err)
	}
	return ok, nil
}

func (t *tx) CreateWorkspace(w hub.Workspace) error {
	// Creating takes two inserts. Both conflicts are checked first (the
	// write lock is held, so nothing changes in between), so a refused
	// create never leaves its id marked used; the UNIQUE constraints stay
	// as the last word.
	used, err := t.WorkspaceIDUsed(w.ID)
	if err != nil {
		return err
	}
	if used {
		return hub.Errorf(hub.Conflict, "workspace id %q was already used", w.ID)
	}
	held, err := t.exists(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE backend = ? AND path = ?)`, w.Backend, w.Path)
	if err != nil {
		return err
	}
	if held {
		return hub.Errorf(hub.Conflict, "another workspace holds this path")
	}
	if _, err := t.exec(`INSERT INTO workspace_ids (id) VALUES (?)`, w.ID); err != nil {
		return t.workspaceWriteError(err)
	}
	_, err = t.exec(`INSERT INTO workspaces (`+workspaceCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
		w.ID, w.Path, w.DisplayName, w.Backend, w.AutoStart, nanos(w.RegisteredAt))
	if err != nil {
		return t.workspaceWriteError(err)
	}
	return nil
}

// workspaceWriteError maps a constraint violation that the checks before a
// write should have prevented.
func (t *tx) workspaceWriteError(err error) error {
	if isConstraint(err, "UNIQUE") {
		return hub.Errorf(hub.Conflict, "workspace id or path already in use")
	}
	return internal(err)
}

func (t *tx) UpdateWorkspace(w hub.Workspace) error {
	// One statement: a path conflict fails it whole, and an absent id
	// matches no row (NotFound) before any path is compared.
	err := t.expectOne(hub.Errorf(hub.NotFound, "workspace %q not found", w.ID),
		`UPDATE workspaces SET path = ?, display_name = ?, auto_start = ? WHERE id = ?`,
		w.Path, w.DisplayName, w.AutoStart, w.ID)
	if hub.KindOf(err) == hub.Internal && isConstraint(err, "UNIQUE") {
		return hub.Errorf(hub.Conflict, "another workspace holds this path")
	}
	return err
}

// DeleteWorkspace relies on ON DELETE CASCADE for the personal states and
// activity marks; workspace_ids keeps the id.
func (t *tx) DeleteWorkspace(id string) error {
	return t.expectOne(hub.Errorf(hub.NotFound, "workspace %q not found", id), `DELETE FROM workspaces WHERE id = ?`, id)
}

func scanJournal(sc scanner) (hub.Journal, error) {
	var j hub.Journal
	var kind string
	var created int64
	// Scanning into *[]byte copies, so the caller owns Data.
	err := sc.Scan(&j.ID, &kind, &j.Data, &created)
	j.Kind, j.CreatedAt = hub.JournalKind(kind), fromNanos(created)
	return j, err
}

func (t *tx) Journals() ([]hub.Journal, error) {
	return queryAll(t, scanJournal, `SELECT id, kind, data, created_at FROM journals ORDER BY id`)
}

func (t *tx) AddJournal(j hub.Journal) (int64, error) {
	data := j.Data
	if data == nil {
		data = []byte{} // the column is NOT NULL; a nil payload is an empty one
	}
	res, err := t.exec(`INSERT INTO journals (kind, data, created_at) VALUES (?, ?, ?)`,
		string(j.Kind), data, nanos(j.CreatedAt))
	if err != nil {
		return 0, internal(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, internal(err)
	}
	return id, nil
}

func (t *tx) DeleteJournal(id int64) error {
	return t.expectOne(hub.Errorf(hub.NotFound, "journal %d not found", id), `DELETE FROM journals WHERE id = ?`, id)
}
