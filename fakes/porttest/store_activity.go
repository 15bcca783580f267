package porttest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// big is a stamp far above any small counter, to show a store keeps all 64
// bits it is given rather than a narrower column's worth.
const big = uint64(1) << 62

// finish and viewMark build the two kinds of activity mark.
func finish(ws string, stamp uint64) hub.ActivityMark {
	return hub.ActivityMark{WorkspaceID: ws, Stamp: stamp}
}

func viewMark(ws, user string, stamp uint64) hub.ActivityMark {
	return hub.ActivityMark{WorkspaceID: ws, User: user, Stamp: stamp}
}

// markList renders every stored mark as "workspace/user=stamp" (user empty
// for a finish), sorted, since ActivityMarks promises no order.
func markList(tx hub.Tx) (string, error) {
	ms, err := tx.ActivityMarks()
	if err != nil {
		return "", err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s/%s=%d", m.WorkspaceID, m.User, m.Stamp)
	}
	slices.Sort(out)
	return strings.Join(out, " "), nil
}

// seedMarks stores a finish of w1 and w2 and a view of every user of each.
func (k storeKit) seedMarks(t *testing.T, s hub.Store) {
	k.update(t, s, func(tx hub.Tx) error {
		return errors.Join(tx.PutActivityMark(finish("w1", 10)), tx.PutActivityMark(finish("w2", 20)),
			tx.PutActivityMark(viewMark("w1", "ann", 11)), tx.PutActivityMark(viewMark("w1", "bob", 12)),
			tx.PutActivityMark(viewMark("w2", "ann", 21)), tx.PutActivityMark(viewMark("w2", "bob", 22)))
	})
}

// seededMarks is markList of what seedMarks stores.
const seededMarks = "w1/=10 w1/ann=11 w1/bob=12 w2/=20 w2/ann=21 w2/bob=22"

// storeActivity runs the subtests of the activity marks; the read-only
// View cases are with the other records' in storeRecords.
func storeActivity(t *testing.T, k storeKit) {
	ctx := k.ctx

	t.Run("ActivityMarks", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			got, err := markList(tx)
			is.NoErr(err)                                                                    // list before any put
			is.Equal(got, "")                                                                // a new store has no marks
			is.NoErr(tx.PutActivityMark(finish("w1", 5)))                                    // a finish
			is.NoErr(tx.PutActivityMark(viewMark("w1", "ann", 7)))                           // a view of it
			is.NoErr(tx.PutActivityMark(viewMark("w1", "bob", big)))                         // a view with a large stamp
			is.NoErr(tx.PutActivityMark(viewMark("w2", "ann", 3)))                           // a view of a workspace never finished
			is.Equal(hub.KindOf(tx.PutActivityMark(finish("w9", 1))), hub.NotFound)          // finish of an unknown workspace
			is.Equal(hub.KindOf(tx.PutActivityMark(viewMark("w9", "ann", 1))), hub.NotFound) // view of an unknown workspace
			is.Equal(hub.KindOf(tx.PutActivityMark(viewMark("w1", "eve", 1))), hub.NotFound) // view by an unknown user
			got, err = markList(tx)
			is.NoErr(err)                                                        // list in the same transaction
			is.Equal(got, fmt.Sprintf("w1/=5 w1/ann=7 w1/bob=%d w2/ann=3", big)) // puts are visible at once; refused ones stored nothing
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ms, err := tx.ActivityMarks()
			is.NoErr(err)        // read the marks
			is.Equal(len(ms), 4) // one per put
			for i := range ms {
				ms[i].Stamp = 0 // the caller changes what it was given
			}
			got, err := markList(tx)
			is.NoErr(err)                                                        // read again
			is.Equal(got, fmt.Sprintf("w1/=5 w1/ann=7 w1/bob=%d w2/ann=3", big)) // every mark round-trips, the large stamp whole
			return nil
		}))

		k.update(t, s, func(tx hub.Tx) error {
			return errors.Join(tx.PutActivityMark(finish("w1", 2)), tx.PutActivityMark(viewMark("w1", "ann", big+1)))
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)                                                                // read the replacements
			is.Equal(got, fmt.Sprintf("w1/=2 w1/ann=%d w1/bob=%d w2/ann=3", big+1, big)) // a put replaces the mark of its workspace and user, even with a lower stamp
			return nil
		}))
	})

	t.Run("DeleteActivityMark", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.seedMarks(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.DeleteActivityMark("w1", ""))    // the finish of w1
			is.NoErr(tx.DeleteActivityMark("w2", "ann")) // ann's view of w2
			is.NoErr(tx.DeleteActivityMark("w1", ""))    // the finish of w1 again: absent is not an error
			is.NoErr(tx.DeleteActivityMark("w1", "eve")) // a view by an unknown user
			is.NoErr(tx.DeleteActivityMark("w9", "ann")) // a view of an unknown workspace
			is.NoErr(tx.DeleteActivityMark("w9", ""))    // the finish of an unknown workspace
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)                                         // list what is left
			is.Equal(got, "w1/ann=11 w1/bob=12 w2/=20 w2/bob=22") // only the two marks named went: views outlive their finish
			return nil
		}))

		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteActivityMarks("w2") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)                        // list what is left
			is.Equal(got, "w1/ann=11 w1/bob=12") // every mark of w2 went, finish and views
			ws, err := tx.Workspaces()
			is.NoErr(err)              // list workspaces
			is.Equal(ids(ws), "w1,w2") // the workspace itself stays
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteActivityMarks("w2") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)                        // list again
			is.Equal(got, "w1/ann=11 w1/bob=12") // deleting the marks of a workspace without any changes nothing
			return nil
		}))
	})

	t.Run("ActivityMarksCascade", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.seedMarks(t, s)
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteWorkspace("w1") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)                               // list what is left
			is.Equal(got, "w2/=20 w2/ann=21 w2/bob=22") // every mark of w1 went with it
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteUser("ann") })
		k.update(t, s, func(tx hub.Tx) error { return tx.CreateUser(k.user("ann")) })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)                     // list what is left
			is.Equal(got, "w2/=20 w2/bob=22") // ann's views went with ann, and a new ann has none; the finish and bob's stay
			return nil
		}))
	})

	t.Run("RollbackActivityMarks", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.seedMarks(t, s)
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx hub.Tx) error {
			is.NoErr(tx.PutActivityMark(finish("w1", 99)))          // replace a finish
			is.NoErr(tx.PutActivityMark(viewMark("w1", "ann", 99))) // replace a view
			is.NoErr(tx.DeleteActivityMark("w1", "bob"))            // delete a view
			is.NoErr(tx.DeleteActivityMarks("w2"))                  // delete a workspace's marks
			return boom
		})
		is.Equal(err, boom)                          // fn's error comes back unchanged
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := markList(tx)
			is.NoErr(err)              // list the marks
			is.Equal(got, seededMarks) // none put, replaced or deleted
			return nil
		}))
	})
}
