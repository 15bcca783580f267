package fakes

import "github.com/wharfhub/wharf/hub"

// This file holds the fake store's per-user, per-workspace records and the
// Hub-wide settings.

// requirePair answers NotFound unless both the user and the registered
// workspace exist, as the SQLite adapter's foreign keys do.
func (t *tx) requirePair(user, workspaceID string) error {
	if _, ok := t.st.users[user]; !ok {
		return hub.Errorf(hub.NotFound, "user %q not found", user)
	}
	if t.workspaceIndex(workspaceID) < 0 {
		return hub.Errorf(hub.NotFound, "workspace %q not found", workspaceID)
	}
	return nil
}

// PersonalState answers the zero state for a pair with nothing stored,
// including a user or workspace that does not exist.
func (t *tx) PersonalState(user, workspaceID string) (hub.PersonalState, error) {
	return clonePersonalState(t.st.personal[userWorkspace{user, workspaceID}]), nil
}

func (t *tx) PutPersonalState(user, workspaceID string, st hub.PersonalState) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := t.requirePair(user, workspaceID); err != nil {
		return err
	}
	t.st.personal[userWorkspace{user, workspaceID}] = clonePersonalState(st)
	return nil
}

func (t *tx) Setting(key string) (string, bool, error) {
	v, ok := t.st.settings[key]
	return v, ok, nil
}

func (t *tx) PutSetting(key, value string) error {
	if err := t.write(); err != nil {
		return err
	}
	t.st.settings[key] = value
	return nil
}

func (t *tx) DeleteSetting(key string) error {
	if err := t.write(); err != nil {
		return err
	}
	delete(t.st.settings, key)
	return nil
}

// clonePersonalState copies every set field into fresh memory, so neither
// the caller nor a later transaction can change a stored state through a
// pointer it holds.
func clonePersonalState(st hub.PersonalState) hub.PersonalState {
	return hub.PersonalState{
		DocumentPath:  clonePtr(st.DocumentPath),
		Follow:        clonePtr(st.Follow),
		PreviewMode:   clonePtr(st.PreviewMode),
		CompareTarget: clonePtr(st.CompareTarget),
		FilesFilter:   clonePtr(st.FilesFilter),
		LastPtyID:     clonePtr(st.LastPtyID),
	}
}

// clonePtr returns nil for nil (unset) and a pointer to a copy otherwise.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
