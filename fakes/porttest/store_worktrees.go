package porttest

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// provenance returns a record of checkout n of repository r.
func (k storeKit) provenance(r, n byte) hub.WorktreeProvenance {
	return hub.WorktreeProvenance{CheckoutID: strings.Repeat(string(n), 32), RepositoryID: strings.Repeat(string(r), 32),
		Path: "/src/app.worktrees/" + string(n), SourceRef: "origin/main", CreatedBy: "ann", CreatedAt: k.t0}
}

// storeWorktrees runs the subtests of the worktree provenance records.
func storeWorktrees(t *testing.T, k storeKit) {
	t.Run("WorktreeProvenance", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		a1, a2, b1 := k.provenance('a', '2'), k.provenance('a', '1'), k.provenance('b', '3')
		k.update(t, s, func(tx hub.Tx) error {
			return errors.Join(tx.PutWorktreeProvenance(a1), tx.PutWorktreeProvenance(a2), tx.PutWorktreeProvenance(b1))
		})
		is.NoErr(s.View(k.ctx, func(tx hub.Tx) error {
			got, err := tx.WorktreeProvenances(a1.RepositoryID)
			is.NoErr(err)
			is.Equal(len(got), 2)                      // the repository's records only
			is.Equal(got[0].CheckoutID, a2.CheckoutID) // sorted by checkout id
			is.True(got[1].CreatedAt.Equal(a1.CreatedAt))
			got[1].CreatedAt = a1.CreatedAt
			is.Equal(got[1], a1) // as stored
			none, err := tx.WorktreeProvenances(strings.Repeat("c", 32))
			is.NoErr(err)
			is.Equal(len(none), 0) // another repository has none
			return nil
		}))

		a1.Path, a1.SourceRef = "/src/app.worktrees/moved", ""
		k.update(t, s, func(tx hub.Tx) error {
			return errors.Join(tx.PutWorktreeProvenance(a1), tx.DeleteWorktreeProvenance(a2.CheckoutID),
				tx.DeleteWorktreeProvenance(a2.CheckoutID)) // deleting an absent record is not an error
		})
		is.NoErr(s.View(k.ctx, func(tx hub.Tx) error {
			got, err := tx.WorktreeProvenances(a1.RepositoryID)
			is.NoErr(err)
			is.Equal(len(got), 1)                             // one deleted
			is.Equal(got[0].Path, "/src/app.worktrees/moved") // the other replaced
			is.Equal(got[0].SourceRef, "")
			return nil
		}))
	})

	t.Run("WorktreeProvenanceIsChecked", func(t *testing.T) {
		s := k.open(t)
		good := k.provenance('a', '1')
		for _, tc := range []struct {
			name string
			p    func(p *hub.WorktreeProvenance)
		}{
			{"a short checkout id", func(p *hub.WorktreeProvenance) { p.CheckoutID = "abc" }},
			{"an upper-case repository id", func(p *hub.WorktreeProvenance) { p.RepositoryID = strings.Repeat("A", 32) }},
			{"a relative path", func(p *hub.WorktreeProvenance) { p.Path = "app.worktrees/x" }},
			{"an unclean path", func(p *hub.WorktreeProvenance) { p.Path = "/src/../x" }},
			{"no user", func(p *hub.WorktreeProvenance) { p.CreatedBy = "" }},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				p := good
				tc.p(&p)
				err := s.Update(k.ctx, func(tx hub.Tx) error { return tx.PutWorktreeProvenance(p) })
				is.Equal(hub.KindOf(err), hub.Invalid) // refused
			})
		}
		is := is.New(t)
		err := s.View(k.ctx, func(tx hub.Tx) error { return tx.PutWorktreeProvenance(good) })
		is.True(err != nil) // a read-only transaction writes nothing
	})
}
