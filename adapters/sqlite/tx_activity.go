package sqlite

import (
	"math"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the activity marks (migration 0003): finish marks in
// activity_finishes, view marks in activity_view_marks.

// stampArg binds a stamp as SQLite's INTEGER, which is signed. A stamp above
// 2^63-1 would wrap negative and sort below every other, so it is refused
// instead: the Hub's counter never gets near it, so reaching it is a bug.
func stampArg(s uint64) (int64, error) {
	if s > math.MaxInt64 {
		return 0, hub.Errorf(hub.Internal, "activity stamp %d does not fit the Hub's database", s)
	}
	return int64(s), nil
}

func scanActivityMark(sc scanner) (hub.ActivityMark, error) {
	var m hub.ActivityMark
	var stamp int64
	err := sc.Scan(&m.WorkspaceID, &m.User, &stamp)
	m.Stamp = uint64(stamp) // never negative: both tables CHECK it
	return m, err
}

func (t *tx) ActivityMarks() ([]hub.ActivityMark, error) {
	return queryAll(t, scanActivityMark, `SELECT workspace_id, '', stamp FROM activity_finishes
		UNION ALL SELECT workspace_id, user_name, stamp FROM activity_view_marks`)
}

func (t *tx) PutActivityMark(m hub.ActivityMark) error {
	stamp, err := stampArg(m.Stamp)
	if err != nil {
		return err
	}
	if m.User != "" {
		if err := t.requirePair(m.User, m.WorkspaceID); err != nil {
			return err
		}
		_, err := t.exec(`INSERT INTO activity_view_marks (user_name, workspace_id, stamp) VALUES (?, ?, ?)
			ON CONFLICT (user_name, workspace_id) DO UPDATE SET stamp = excluded.stamp`,
			m.User, m.WorkspaceID, stamp)
		if err != nil {
			return pairWriteError(err)
		}
		return nil
	}
	// As requirePair does for a pair: the foreign key would refuse the
	// write anyway, but NotFound must say what is missing.
	ok, err := t.exists(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`, m.WorkspaceID)
	if err != nil {
		return err
	}
	if !ok {
		return hub.Errorf(hub.NotFound, "workspace %q not found", m.WorkspaceID)
	}
	_, err = t.exec(`INSERT INTO activity_finishes (workspace_id, stamp) VALUES (?, ?)
		ON CONFLICT (workspace_id) DO UPDATE SET stamp = excluded.stamp`, m.WorkspaceID, stamp)
	if err != nil {
		return pairWriteError(err)
	}
	return nil
}

func (t *tx) DeleteActivityMark(workspaceID, user string) error {
	q, args := `DELETE FROM activity_view_marks WHERE user_name = ? AND workspace_id = ?`, []any{user, workspaceID}
	if user == "" {
		q, args = `DELETE FROM activity_finishes WHERE workspace_id = ?`, []any{workspaceID}
	}
	if _, err := t.exec(q, args...); err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) DeleteActivityMarks(workspaceID string) error {
	if _, err := t.exec(`DELETE FROM activity_finishes WHERE workspace_id = ?`, workspaceID); err != nil {
		return internal(err)
	}
	if _, err := t.exec(`DELETE FROM activity_view_marks WHERE workspace_id = ?`, workspaceID); err != nil {
		return internal(err)
	}
	return nil
}
