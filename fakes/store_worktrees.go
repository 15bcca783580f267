package fakes

import (
	"slices"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the fake store's worktree provenance records.

func (t *tx) WorktreeProvenances(repositoryID string) ([]hub.WorktreeProvenance, error) {
	var out []hub.WorktreeProvenance
	for _, p := range t.st.provenance {
		if p.RepositoryID == repositoryID {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b hub.WorktreeProvenance) int { return strings.Compare(a.CheckoutID, b.CheckoutID) })
	return out, nil
}

func (t *tx) PutWorktreeProvenance(p hub.WorktreeProvenance) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := hub.CheckWorktreeProvenance(p); err != nil {
		return err
	}
	t.st.provenance[p.CheckoutID] = p
	return nil
}

func (t *tx) DeleteWorktreeProvenance(checkoutID string) error {
	if err := t.write(); err != nil {
		return err
	}
	delete(t.st.provenance, checkoutID)
	return nil
}
