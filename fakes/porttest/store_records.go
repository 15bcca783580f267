package porttest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// fullPersonalState sets every field of a PersonalState, found by
// reflection, so a field added to the record but not to a store fails the
// round trip instead of being silently dropped.
func fullPersonalState(t *testing.T, tag string) hub.PersonalState {
	t.Helper()
	var st hub.PersonalState
	v := reflect.ValueOf(&st).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if f.Kind() != reflect.Pointer {
			t.Fatalf("PersonalState.%s is not a pointer: unset must be representable", name)
		}
		p := reflect.New(f.Type().Elem())
		switch p.Elem().Kind() {
		case reflect.String:
			p.Elem().SetString(tag + " " + name)
		case reflect.Bool:
			p.Elem().SetBool(true)
		default:
			t.Fatalf("PersonalState.%s: the suite does not know how to fill a %s", name, f.Type())
		}
		f.Set(p)
	}
	return st
}

// scribble changes every value that st's set fields point at, as a caller
// keeping its pointers might.
func scribble(st hub.PersonalState) {
	v := reflect.ValueOf(st)
	for i := range v.NumField() {
		if p := v.Field(i); !p.IsNil() {
			p.Elem().Set(reflect.Zero(p.Type().Elem()))
		}
	}
}

// show renders st with its values, so a failed comparison says which field
// differs rather than printing pointers.
func show(st hub.PersonalState) string {
	var b strings.Builder
	v := reflect.ValueOf(st)
	for i := range v.NumField() {
		fmt.Fprintf(&b, "%s=", v.Type().Field(i).Name)
		if p := v.Field(i); p.IsNil() {
			b.WriteString("<unset> ")
		} else {
			fmt.Fprintf(&b, "%q ", fmt.Sprint(p.Elem().Interface()))
		}
	}
	return b.String()
}

// seedPair registers users ann and bob and workspaces w1 and w2.
func (k storeKit) seedPair(t *testing.T, s hub.Store) {
	k.update(t, s, func(tx hub.Tx) error {
		return errors.Join(tx.CreateUser(k.user("ann")), tx.CreateUser(k.user("bob")),
			tx.CreateWorkspace(k.workspace("w1", 1)), tx.CreateWorkspace(k.workspace("w2", 2)))
	})
}

// storeRecords runs the subtests of personal states, settings, and of the
// new records under cascades, rollback and View.
func storeRecords(t *testing.T, k storeKit) {
	ctx := k.ctx
	ptr := func(s string) *string { return &s }
	no := false

	t.Run("PersonalState", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		full := fullPersonalState(t, "ann")
		k.update(t, s, func(tx hub.Tx) error {
			st, err := tx.PersonalState("ann", "w1")
			is.NoErr(err)                                                              // read before any put
			is.Equal(show(st), show(hub.PersonalState{}))                              // nothing stored reads as the zero state
			is.NoErr(tx.PutPersonalState("ann", "w1", full))                           // put every field
			scribble(full)                                                             // the caller reuses its pointers
			is.Equal(hub.KindOf(tx.PutPersonalState("eve", "w1", full)), hub.NotFound) // unknown user
			is.Equal(hub.KindOf(tx.PutPersonalState("ann", "w9", full)), hub.NotFound) // unknown workspace
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			st, err := tx.PersonalState("ann", "w1")
			is.NoErr(err)                                         // read back
			is.Equal(show(st), show(fullPersonalState(t, "ann"))) // every field round-trips, unaliased by the caller
			scribble(st)                                          // the caller changes what it was given
			again, err := tx.PersonalState("ann", "w1")
			is.NoErr(err)                                            // read again
			is.Equal(show(again), show(fullPersonalState(t, "ann"))) // what was returned was the caller's copy
			other, err := tx.PersonalState("bob", "w1")
			is.NoErr(err)                                    // another user, same workspace
			is.Equal(show(other), show(hub.PersonalState{})) // states are per user
			other, err = tx.PersonalState("ann", "w2")
			is.NoErr(err)                                    // same user, another workspace
			is.Equal(show(other), show(hub.PersonalState{})) // and per workspace
			return nil
		}))

		partial := hub.PersonalState{DocumentPath: ptr(""), Follow: &no, PreviewMode: ptr("source")}
		k.update(t, s, func(tx hub.Tx) error { return tx.PutPersonalState("ann", "w1", partial) })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			st, err := tx.PersonalState("ann", "w1")
			is.NoErr(err)                                                                    // read the replacement
			is.True(st.DocumentPath != nil && *st.DocumentPath == "")                        // an empty string set is not unset
			is.True(st.Follow != nil && !*st.Follow)                                         // false set is not unset
			is.Equal(*st.PreviewMode, "source")                                              // a set field round-trips
			is.True(st.CompareTarget == nil && st.FilesFilter == nil && st.LastPtyID == nil) // put replaces: earlier fields are unset again
			return nil
		}))
	})

	t.Run("Settings", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.update(t, s, func(tx hub.Tx) error {
			_, ok, err := tx.Setting("vapid")
			is.NoErr(err)                           // read an absent key
			is.True(!ok)                            // absent
			is.NoErr(tx.PutSetting("vapid", "v1"))  // put
			is.NoErr(tx.PutSetting("vapid", "v2"))  // replace
			is.NoErr(tx.PutSetting("empty", ""))    // an empty value
			is.NoErr(tx.DeleteSetting("never-set")) // deleting an absent key is not an error
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			v, ok, err := tx.Setting("vapid")
			is.NoErr(err)            // read
			is.True(ok && v == "v2") // the last value wins
			v, ok, err = tx.Setting("empty")
			is.NoErr(err)          // read the empty value
			is.True(ok && v == "") // an empty value is stored, not absent
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteSetting("vapid") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			_, ok, err := tx.Setting("vapid")
			is.NoErr(err) // read a deleted key
			is.True(!ok)  // gone
			return nil
		}))
	})

	t.Run("DeleteCascades", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			for _, u := range []string{"ann", "bob"} {
				for _, w := range []string{"w1", "w2"} {
					is.NoErr(tx.PutPersonalState(u, w, fullPersonalState(t, u))) // state of every pair
				}
			}
			return nil
		})
		// kept reports, per pair, whether its state is still stored. The
		// view marks' cascades are storeActivity's ActivityMarksCascade.
		kept := func(tx hub.Tx, u, w string) bool {
			st, err := tx.PersonalState(u, w)
			is.NoErr(err) // read the state
			return st != hub.PersonalState{}
		}
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteWorkspace("w1") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			is.True(!kept(tx, "ann", "w1") && !kept(tx, "bob", "w1")) // every user's records of w1 went with it
			is.True(kept(tx, "ann", "w2") && kept(tx, "bob", "w2"))   // records of w2 stay
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteUser("ann") })
		k.update(t, s, func(tx hub.Tx) error { return tx.CreateUser(k.user("ann")) })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			is.True(!kept(tx, "ann", "w2")) // ann's records went with ann: a new ann starts empty
			is.True(kept(tx, "bob", "w2"))  // bob's stay
			return nil
		}))
	})

	t.Run("RollbackRecords", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedPair(t, s)
		var journal int64
		k.update(t, s, func(tx hub.Tx) error {
			var err error
			journal, err = tx.AddJournal(hub.Journal{Kind: hub.JournalOnboarding, Data: []byte("j"), CreatedAt: k.t0})
			return errors.Join(err, tx.PutSetting("k", "v"), tx.PutPersonalState("ann", "w1", fullPersonalState(t, "ann")),
				tx.PutActivityMark(viewMark("w1", "ann", 1)))
		})
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx hub.Tx) error {
			moved := k.workspace("w2", 2)
			moved.Path = "/home/ann/moved"
			is.NoErr(tx.CreateWorkspace(k.workspace("w3", 3))) // create
			is.NoErr(tx.UpdateWorkspace(moved))                // update
			is.NoErr(tx.DeleteWorkspace("w1"))                 // delete, cascading
			_, err := tx.AddJournal(hub.Journal{Kind: hub.JournalFolderRemove, CreatedAt: k.t0})
			is.NoErr(err)                                                           // add a journal
			is.NoErr(tx.DeleteJournal(journal))                                     // delete one
			is.NoErr(tx.PutSetting("k", "changed"))                                 // replace a setting
			is.NoErr(tx.PutSetting("k2", "new"))                                    // add one
			is.NoErr(tx.PutPersonalState("bob", "w2", fullPersonalState(t, "bob"))) // put a state
			is.NoErr(tx.PutActivityMark(viewMark("w2", "bob", 2)))                  // put a view mark
			return boom
		})
		is.Equal(err, boom)                          // fn's error comes back unchanged
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ws, err := tx.Workspaces()
			is.NoErr(err)                                   // list workspaces
			is.Equal(ids(ws), "w1,w2")                      // no workspace created or deleted
			is.Equal(ws[1].Path, k.workspace("w2", 2).Path) // no workspace updated
			used, err := tx.WorkspaceIDUsed("w3")
			is.NoErr(err)  // ask about w3
			is.True(!used) // the created id was not kept as used either
			js, err := tx.Journals()
			is.NoErr(err)                                // list journals
			is.True(len(js) == 1 && js[0].ID == journal) // no journal added or deleted
			v, _, err := tx.Setting("k")
			is.NoErr(err)    // read k
			is.Equal(v, "v") // setting not replaced
			_, ok, err := tx.Setting("k2")
			is.NoErr(err) // read k2
			is.True(!ok)  // setting not added
			st, err := tx.PersonalState("ann", "w1")
			is.NoErr(err)                                         // read ann's state of w1
			is.Equal(show(st), show(fullPersonalState(t, "ann"))) // not cascaded away
			st, err = tx.PersonalState("bob", "w2")
			is.NoErr(err)                                 // read bob's state of w2
			is.Equal(show(st), show(hub.PersonalState{})) // not put
			marks, err := markList(tx)
			is.NoErr(err)               // list the activity marks
			is.Equal(marks, "w1/ann=1") // ann's view mark of w1 not cascaded away, bob's of w2 not put
			return nil
		}))
	})

	t.Run("ViewIsReadOnlyRecords", func(t *testing.T) {
		s := k.open(t)
		k.seedPair(t, s)
		var journal int64
		k.update(t, s, func(tx hub.Tx) error {
			var err error
			journal, err = tx.AddJournal(hub.Journal{Kind: hub.JournalOnboarding, CreatedAt: k.t0})
			return errors.Join(err, tx.PutSetting("k", "v"))
		})
		k.seedMarks(t, s)
		w1 := k.workspace("w1", 1)
		w1.DisplayName = "changed"
		for _, c := range []struct {
			name  string
			write func(hub.Tx) error
		}{
			{"CreateWorkspace", func(tx hub.Tx) error { return tx.CreateWorkspace(k.workspace("w3", 3)) }},
			{"UpdateWorkspace", func(tx hub.Tx) error { return tx.UpdateWorkspace(w1) }},
			{"DeleteWorkspace", func(tx hub.Tx) error { return tx.DeleteWorkspace("w2") }},
			{"AddJournal", func(tx hub.Tx) error { _, err := tx.AddJournal(hub.Journal{Kind: hub.JournalOnboarding}); return err }},
			{"PutPersonalState", func(tx hub.Tx) error { return tx.PutPersonalState("ann", "w1", fullPersonalState(t, "ann")) }},
			{"DeleteJournal", func(tx hub.Tx) error { return tx.DeleteJournal(journal) }},
			{"PutSetting", func(tx hub.Tx) error { return tx.PutSetting("k", "changed") }},
			{"DeleteSetting", func(tx hub.Tx) error { return tx.DeleteSetting("k") }},
			{"DeleteAbsentSetting", func(tx hub.Tx) error { return tx.DeleteSetting("absent") }},
			{"PutFinishMark", func(tx hub.Tx) error { return tx.PutActivityMark(finish("w1", 99)) }},
			{"PutViewMark", func(tx hub.Tx) error { return tx.PutActivityMark(viewMark("w1", "ann", 99)) }},
			{"DeleteActivityMark", func(tx hub.Tx) error { return tx.DeleteActivityMark("w1", "ann") }},
			{"DeleteAbsentActivityMark", func(tx hub.Tx) error { return tx.DeleteActivityMark("w9", "ann") }},
			{"DeleteActivityMarks", func(tx hub.Tx) error { return tx.DeleteActivityMarks("w2") }},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				is.True(s.View(ctx, c.write) != nil) // a write inside View fails
			})
		}
		is := is.New(t)
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ws, err := tx.Workspaces()
			is.NoErr(err)                                                 // list workspaces
			is.Equal(ids(ws), "w1,w2")                                    // none created or deleted
			is.Equal(ws[0].DisplayName, k.workspace("w1", 1).DisplayName) // none updated
			js, err := tx.Journals()
			is.NoErr(err)                                // list journals
			is.True(len(js) == 1 && js[0].ID == journal) // none added or deleted
			st, err := tx.PersonalState("ann", "w1")
			is.NoErr(err)                                 // read a state
			is.Equal(show(st), show(hub.PersonalState{})) // none put
			v, ok, err := tx.Setting("k")
			is.NoErr(err)           // read the setting
			is.True(ok && v == "v") // neither replaced nor deleted
			marks, err := markList(tx)
			is.NoErr(err)                // list the activity marks
			is.Equal(marks, seededMarks) // none put, replaced or deleted
			return nil
		}))
	})
}
