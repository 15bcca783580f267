package sqlite

import (
	"database/sql"
	"errors"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the per-user, per-workspace records and the Hub-wide
// settings (migration 0002).

// requirePair answers NotFound unless both the user and the registered
// workspace exist. The foreign keys would refuse the write anyway, but their
// error does not say which parent is missing.
func (t *tx) requirePair(user, workspaceID string) error {
	var userOK, workspaceOK bool
	err := t.queryRow(`SELECT
		EXISTS (SELECT 1 FROM users WHERE name = ?),
		EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`, user, workspaceID).Scan(&userOK, &workspaceOK)
	switch {
	case err != nil:
		return internal(err)
	case !userOK:
		return hub.Errorf(hub.NotFound, "user %q not found", user)
	case !workspaceOK:
		return hub.Errorf(hub.NotFound, "workspace %q not found", workspaceID)
	}
	return nil
}

// pairWriteError maps the error of a write that requirePair vetted.
func pairWriteError(err error) error {
	if isConstraint(err, "FOREIGN KEY") {
		return hub.Errorf(hub.NotFound, "user or workspace not found")
	}
	return internal(err)
}

// PersonalState answers the zero state for a pair with nothing stored,
// including a user or workspace that does not exist.
func (t *tx) PersonalState(user, workspaceID string) (hub.PersonalState, error) {
	var doc, preview, compare, filter, pty sql.Null[string]
	var follow sql.Null[bool]
	err := t.queryRow(`SELECT document_path, follow, preview_mode, compare_target, files_filter, last_pty_id
		FROM personal_states WHERE user_name = ? AND workspace_id = ?`, user, workspaceID).
		Scan(&doc, &follow, &preview, &compare, &filter, &pty)
	if errors.Is(err, sql.ErrNoRows) {
		return hub.PersonalState{}, nil
	}
	if err != nil {
		return hub.PersonalState{}, internal(err)
	}
	return hub.PersonalState{
		DocumentPath:  fromNull(doc),
		Follow:        fromNull(follow),
		PreviewMode:   fromNull(preview),
		CompareTarget: fromNull(compare),
		FilesFilter:   fromNull(filter),
		LastPtyID:     fromNull(pty),
	}, nil
}

func (t *tx) PutPersonalState(user, workspaceID string, st hub.PersonalState) error {
	if err := t.requirePair(user, workspaceID); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO personal_states
		(user_name, workspace_id, document_path, follow, preview_mode, compare_target, files_filter, last_pty_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_name, workspace_id) DO UPDATE SET
			document_path = excluded.document_path, follow = excluded.follow,
			preview_mode = excluded.preview_mode, compare_target = excluded.compare_target,
			files_filter = excluded.files_filter, last_pty_id = excluded.last_pty_id`,
		user, workspaceID, toNull(st.DocumentPath), toNull(st.Follow), toNull(st.PreviewMode),
		toNull(st.CompareTarget), toNull(st.FilesFilter), toNull(st.LastPtyID))
	if err != nil {
		return pairWriteError(err)
	}
	return nil
}

func (t *tx) Setting(key string) (string, bool, error) {
	var v string
	err := t.queryRow(`SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, internal(err)
	}
	return v, true, nil
}

func (t *tx) PutSetting(key, value string) error {
	_, err := t.exec(`INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) DeleteSetting(key string) error {
	if _, err := t.exec(`DELETE FROM settings WHERE key = ?`, key); err != nil {
		return internal(err)
	}
	return nil
}

// toNull binds an unset (nil) field as NULL and a set one as its value,
// even the empty string or false.
func toNull[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// fromNull is toNull's inverse: NULL reads back as nil, never as a pointer
// to the zero value.
func fromNull[T any](n sql.Null[T]) *T {
	if !n.Valid {
		return nil
	}
	v := n.V
	return &v
}
