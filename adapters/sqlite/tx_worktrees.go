package sqlite

import "github.com/wharfhub/wharf/hub"

// This file holds the worktree provenance records (migration 0006).

func scanWorktreeProvenance(sc scanner) (hub.WorktreeProvenance, error) {
	var p hub.WorktreeProvenance
	var created int64
	err := sc.Scan(&p.CheckoutID, &p.RepositoryID, &p.Path, &p.SourceRef, &p.CreatedBy, &created)
	p.CreatedAt = fromNanos(created)
	return p, err
}

func (t *tx) WorktreeProvenances(repositoryID string) ([]hub.WorktreeProvenance, error) {
	return queryAll(t, scanWorktreeProvenance, `SELECT checkout_id, repository_id, path, source_ref, created_by, created_at
		FROM worktree_provenance WHERE repository_id = ? ORDER BY checkout_id`, repositoryID)
}

func (t *tx) PutWorktreeProvenance(p hub.WorktreeProvenance) error {
	if err := hub.CheckWorktreeProvenance(p); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO worktree_provenance (checkout_id, repository_id, path, source_ref, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (checkout_id) DO UPDATE SET repository_id = excluded.repository_id, path = excluded.path,
			source_ref = excluded.source_ref, created_by = excluded.created_by, created_at = excluded.created_at`,
		p.CheckoutID, p.RepositoryID, p.Path, p.SourceRef, p.CreatedBy, nanos(p.CreatedAt))
	if err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) DeleteWorktreeProvenance(checkoutID string) error {
	if _, err := t.exec(`DELETE FROM worktree_provenance WHERE checkout_id = ?`, checkoutID); err != nil {
		return internal(err)
	}
	return nil
}
