package fakes

import "github.com/wharfhub/wharf/hub"

// This file holds the fake store's activity marks. Finish marks and view
// marks live in separate maps, as in the SQLite adapter's two tables, so a
// user's cascade can never reach a workspace's finish mark.

// ActivityMarks returns a fresh slice: marks are plain values, so the
// caller may keep or change it without reaching the store.
func (t *tx) ActivityMarks() ([]hub.ActivityMark, error) {
	ms := make([]hub.ActivityMark, 0, len(t.st.finishes)+len(t.st.viewMarks))
	for ws, stamp := range t.st.finishes {
		ms = append(ms, hub.ActivityMark{WorkspaceID: ws, Stamp: stamp})
	}
	for k, stamp := range t.st.viewMarks {
		ms = append(ms, hub.ActivityMark{WorkspaceID: k.workspace, User: k.user, Stamp: stamp})
	}
	return ms, nil
}

func (t *tx) PutActivityMark(m hub.ActivityMark) error {
	if err := t.write(); err != nil {
		return err
	}
	if m.User == "" {
		if t.workspaceIndex(m.WorkspaceID) < 0 {
			return hub.Errorf(hub.NotFound, "workspace %q not found", m.WorkspaceID)
		}
		t.st.finishes[m.WorkspaceID] = m.Stamp
		return nil
	}
	if err := t.requirePair(m.User, m.WorkspaceID); err != nil {
		return err
	}
	t.st.viewMarks[userWorkspace{m.User, m.WorkspaceID}] = m.Stamp
	return nil
}

func (t *tx) DeleteActivityMark(workspaceID, user string) error {
	if err := t.write(); err != nil {
		return err
	}
	if user == "" {
		delete(t.st.finishes, workspaceID)
	} else {
		delete(t.st.viewMarks, userWorkspace{user, workspaceID})
	}
	return nil
}

func (t *tx) DeleteActivityMarks(workspaceID string) error {
	if err := t.write(); err != nil {
		return err
	}
	delete(t.st.finishes, workspaceID)
	for k := range t.st.viewMarks {
		if k.workspace == workspaceID {
			delete(t.st.viewMarks, k)
		}
	}
	return nil
}
