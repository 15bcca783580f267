package porttest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// storeKit is what the Store suite's subtests share.
type storeKit struct {
	ctx    context.Context
	t0     time.Time
	open   func(t *testing.T) hub.Store
	update func(t *testing.T, s hub.Store, fn func(hub.Tx) error)
}

// user returns a user named name, created at t0.
func (k storeKit) user(name string) hub.User {
	return hub.User{Name: name, PasswordHash: "$argon2id$" + name, CreatedAt: k.t0}
}

// workspace returns a workspace whose path and display name derive from id,
// registered n nanoseconds after t0 (so times differ below the second).
func (k storeKit) workspace(id string, n int) hub.Workspace {
	return hub.Workspace{ID: id, Path: "/home/ann/src/" + id, DisplayName: "Work " + id, Backend: "local",
		RegisteredAt: k.t0.Add(time.Duration(n))}
}

// ids lists the ids of ws, in order, comma-separated.
func ids(ws []hub.Workspace) string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return strings.Join(out, ",")
}

// sameWorkspace compares every field, times with Equal: a store may give
// back another location or drop the monotonic reading.
func sameWorkspace(a, b hub.Workspace) bool {
	if !a.RegisteredAt.Equal(b.RegisteredAt) {
		return false
	}
	a.RegisteredAt = b.RegisteredAt
	return a == b
}

// storeWorkspaces runs the subtests of the workspace registry and the
// recovery journals.
func storeWorkspaces(t *testing.T, k storeKit) {
	ctx := k.ctx

	t.Run("Workspaces", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		zeta, alpha, mid := k.workspace("zeta", 1), k.workspace("alpha", 2), k.workspace("mid", 3)
		alpha.AutoStart = true
		k.update(t, s, func(tx hub.Tx) error {
			ws, err := tx.Workspaces()
			is.NoErr(err)                       // list an empty registry
			is.Equal(len(ws), 0)                // empty at first
			is.NoErr(tx.CreateWorkspace(zeta))  // register zeta
			is.NoErr(tx.CreateWorkspace(alpha)) // register alpha
			is.NoErr(tx.CreateWorkspace(mid))   // register mid
			clash := k.workspace("other", 4)
			clash.Path = alpha.Path
			is.Equal(hub.KindOf(tx.CreateWorkspace(clash)), hub.Conflict) // a path another workspace holds
			used, err := tx.WorkspaceIDUsed("other")
			is.NoErr(err)  // ask about the refused id
			is.True(!used) // a refused create leaves its id unused
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			ws, err := tx.Workspaces()
			is.NoErr(err)                       // list
			is.Equal(ids(ws), "zeta,alpha,mid") // registration order, not id order
			got, err := tx.Workspace("alpha")
			is.NoErr(err)                      // find by id
			is.True(sameWorkspace(got, alpha)) // every field round-trips, the time to the nanosecond
			_, err = tx.Workspace("nope")
			is.Equal(hub.KindOf(err), hub.NotFound) // unknown id
			ws[0].DisplayName = "scribbled"
			again, err := tx.Workspace("zeta")
			is.NoErr(err)                                 // read again
			is.Equal(again.DisplayName, zeta.DisplayName) // the returned slice is the caller's copy
			return nil
		}))

		k.update(t, s, func(tx hub.Tx) error {
			moved := zeta
			moved.Path, moved.DisplayName, moved.AutoStart = "/home/ann/moved", "Moved", true
			moved.Backend, moved.RegisteredAt = "elsewhere", k.t0.Add(time.Hour)
			is.NoErr(tx.UpdateWorkspace(moved)) // update zeta
			got, err := tx.Workspace("zeta")
			is.NoErr(err)                                      // read the update back
			is.Equal(got.Path, "/home/ann/moved")              // path replaced
			is.Equal(got.DisplayName, "Moved")                 // display name replaced
			is.True(got.AutoStart)                             // AutoStart replaced
			is.Equal(got.Backend, "local")                     // backend kept
			is.True(got.RegisteredAt.Equal(zeta.RegisteredAt)) // registration time kept

			same := alpha
			same.DisplayName = "Renamed only"
			is.NoErr(tx.UpdateWorkspace(same)) // keeping its own path is no conflict
			taken := mid
			taken.Path, taken.DisplayName = alpha.Path, "Taken"
			is.Equal(hub.KindOf(tx.UpdateWorkspace(taken)), hub.Conflict) // a path another workspace holds
			got, err = tx.Workspace("mid")
			is.NoErr(err)                    // read mid
			is.True(sameWorkspace(got, mid)) // a refused update changes nothing
			ghost := k.workspace("ghost", 9)
			is.Equal(hub.KindOf(tx.UpdateWorkspace(ghost)), hub.NotFound) // update an unknown id
			return nil
		})
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.DeleteWorkspace("alpha"))                           // forget alpha
			is.Equal(hub.KindOf(tx.DeleteWorkspace("alpha")), hub.NotFound) // forget twice
			again := k.workspace("beta", 5)
			again.Path = alpha.Path
			is.NoErr(tx.CreateWorkspace(again)) // a forgotten workspace's path is free again
			ws, err := tx.Workspaces()
			is.NoErr(err)                      // list
			is.Equal(ids(ws), "zeta,mid,beta") // order kept; the newest comes last
			_, err = tx.Workspace("alpha")
			is.Equal(hub.KindOf(err), hub.NotFound) // a forgotten workspace is not found
			return nil
		})
	})

	t.Run("WorkspaceIDsNeverReused", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.update(t, s, func(tx hub.Tx) error { return tx.CreateWorkspace(k.workspace("w1", 1)) })
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteWorkspace("w1") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			used, err := tx.WorkspaceIDUsed("w1")
			is.NoErr(err) // ask about w1
			is.True(used) // a forgotten id stays used
			used, err = tx.WorkspaceIDUsed("w2")
			is.NoErr(err)  // ask about w2
			is.True(!used) // an id never given is unused
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error {
			reborn := k.workspace("w1", 2)
			reborn.Path = "/home/ann/elsewhere"
			is.Equal(hub.KindOf(tx.CreateWorkspace(reborn)), hub.Conflict) // a used id is refused
			return nil
		})
	})

	t.Run("Journals", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		binary := []byte{0x00, 0xff, 0xfe, '\n', 0x00, 0xc3, 0x28} // NUL bytes and invalid UTF-8
		a := hub.Journal{ID: 7, Kind: hub.JournalOnboarding, Data: binary, CreatedAt: k.t0}
		b := hub.Journal{ID: 7, Kind: hub.JournalFolderRename, Data: []byte(`{"from":"a"}`), CreatedAt: k.t0.Add(1)}
		c := hub.Journal{ID: 7, Kind: hub.JournalFolderRemove, CreatedAt: k.t0.Add(2)}
		var idA, idB, idC int64
		k.update(t, s, func(tx hub.Tx) error {
			var err error
			idA, err = tx.AddJournal(a)
			is.NoErr(err) // add a
			idB, err = tx.AddJournal(b)
			is.NoErr(err) // add b
			idC, err = tx.AddJournal(c)
			is.NoErr(err)                   // add c, with no data
			is.True(idA < idB && idB < idC) // IDs increase; the given ID is ignored
			binary[0] = 'X'                 // the caller reuses its buffer
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			js, err := tx.Journals()
			is.NoErr(err)                                                                      // list
			is.Equal(len(js), 3)                                                               // all three
			is.Equal([]int64{js[0].ID, js[1].ID, js[2].ID}, []int64{idA, idB, idC})            // oldest first
			is.Equal(js[0].Kind, hub.JournalOnboarding)                                        // kind round-trips
			is.True(bytes.Equal(js[0].Data, []byte{0x00, 0xff, 0xfe, '\n', 0x00, 0xc3, 0x28})) // data round-trips byte for byte, unaliased
			is.True(js[1].CreatedAt.Equal(k.t0.Add(1)))                                        // time round-trips to the nanosecond
			is.Equal(len(js[2].Data), 0)                                                       // no data stays no data
			js[1].Data[0] = 'X'
			again, err := tx.Journals()
			is.NoErr(err)                                   // list again
			is.Equal(string(again[1].Data), `{"from":"a"}`) // returned data is the caller's copy
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.DeleteJournal(idC))                               // delete the newest
			is.Equal(hub.KindOf(tx.DeleteJournal(idC)), hub.NotFound)     // delete twice
			is.Equal(hub.KindOf(tx.DeleteJournal(idC+100)), hub.NotFound) // delete an ID never given
			return nil
		})
		k.update(t, s, func(tx hub.Tx) error {
			id, err := tx.AddJournal(c)
			is.NoErr(err)     // add after deleting the newest
			is.True(id > idC) // the deleted newest ID is not given again
			js, err := tx.Journals()
			is.NoErr(err)                                                          // list
			is.Equal([]int64{js[0].ID, js[1].ID, js[2].ID}, []int64{idA, idB, id}) // still oldest first
			return nil
		})
	})
}
