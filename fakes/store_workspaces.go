package fakes

import (
	"bytes"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the fake store's workspace registry and recovery journals.

func (t *tx) Workspaces() ([]hub.Workspace, error) {
	// The clone is the caller's to keep; the slice is already ordered.
	return slices.Clone(t.st.workspaces), nil
}

// workspaceIndex returns the position of the registered workspace id, or -1.
func (t *tx) workspaceIndex(id string) int {
	return slices.IndexFunc(t.st.workspaces, func(w hub.Workspace) bool { return w.ID == id })
}

// pathHolder returns the id of the registered workspace at path on
// backend, or "": paths are unique per machine.
func (t *tx) pathHolder(backend, path string) string {
	for _, w := range t.st.workspaces {
		if w.Backend == backend && w.Path == path {
			return w.ID
		}
	}
	return ""
}

func (t *tx) Workspace(id string) (hub.Workspace, error) {
	i := t.workspaceIndex(id)
	if i < 0 {
		return hub.Workspace{}, hub.Errorf(hub.NotFound, "workspace %q not found", id)
	}
	return t.st.workspaces[i], nil
}

func (t *tx) WorkspaceIDUsed(id string) (bool, error) { return t.st.usedIDs[id], nil }

func (t *tx) CreateWorkspace(w hub.Workspace) error {
	if err := t.write(); err != nil {
		return err
	}
	// Both checks come before any change, so a refused create leaves the
	// id unused.
	if t.st.usedIDs[w.ID] {
		return hub.Errorf(hub.Conflict, "workspace id %q was already used", w.ID)
	}
	if t.pathHolder(w.Backend, w.Path) != "" {
		return hub.Errorf(hub.Conflict, "another workspace holds this path")
	}
	t.st.usedIDs[w.ID] = true
	t.st.workspaces = append(t.st.workspaces, w)
	return nil
}

func (t *tx) UpdateWorkspace(w hub.Workspace) error {
	if err := t.write(); err != nil {
		return err
	}
	i := t.workspaceIndex(w.ID)
	if i < 0 {
		return hub.Errorf(hub.NotFound, "workspace %q not found", w.ID)
	}
	if holder := t.pathHolder(t.st.workspaces[i].Backend, w.Path); holder != "" && holder != w.ID {
		return hub.Errorf(hub.Conflict, "another workspace holds this path")
	}
	// The slice was cloned for this transaction, so assigning an element
	// does not reach the committed state.
	cur := &t.st.workspaces[i]
	cur.Path, cur.DisplayName, cur.AutoStart = w.Path, w.DisplayName, w.AutoStart
	return nil
}

func (t *tx) DeleteWorkspace(id string) error {
	if err := t.write(); err != nil {
		return err
	}
	i := t.workspaceIndex(id)
	if i < 0 {
		return hub.Errorf(hub.NotFound, "workspace %q not found", id)
	}
	t.st.workspaces = slices.Delete(t.st.workspaces, i, i+1)
	delete(t.st.finishes, id)
	t.forget(func(k userWorkspace) bool { return k.workspace == id })
	t.forgetAssignments(id)
	t.forgetWorkspaceNotices(id)
	return nil
}

// forget deletes the personal state and activity view mark of every
// (user, workspace) pair that match selects: the fake's ON DELETE CASCADE.
func (t *tx) forget(match func(userWorkspace) bool) {
	for k := range t.st.personal {
		if match(k) {
			delete(t.st.personal, k)
		}
	}
	for k := range t.st.viewMarks {
		if match(k) {
			delete(t.st.viewMarks, k)
		}
	}
}

func (t *tx) Journals() ([]hub.Journal, error) {
	js := make([]hub.Journal, len(t.st.journals))
	for i, j := range t.st.journals {
		j.Data = bytes.Clone(j.Data)
		js[i] = j
	}
	return js, nil
}

func (t *tx) AddJournal(j hub.Journal) (int64, error) {
	if err := t.write(); err != nil {
		return 0, err
	}
	// lastJournal survives deletes, so even the newest journal's ID is
	// never given again; it lives in state, so a rollback forgets IDs that
	// were never committed, as SQLite's AUTOINCREMENT does.
	t.st.lastJournal++
	j.ID = t.st.lastJournal
	j.Data = bytes.Clone(j.Data)
	t.st.journals = append(t.st.journals, j)
	return j.ID, nil
}

func (t *tx) DeleteJournal(id int64) error {
	if err := t.write(); err != nil {
		return err
	}
	i := slices.IndexFunc(t.st.journals, func(j hub.Journal) bool { return j.ID == id })
	if i < 0 {
		return hub.Errorf(hub.NotFound, "journal %d not found", id)
	}
	t.st.journals = slices.Delete(t.st.journals, i, i+1)
	return nil
}
