package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// crash is what the test hooks panic with to stop a Hub dead between two
// steps of an operation, as a killed process would stop.
type crash struct{}

// survive runs op, which a test hook may stop dead with crash{}, as a
// killed Hub stops.
func survive(op func()) {
	defer func() {
		if r := recover(); r != nil && r != (crash{}) {
			panic(r)
		}
	}()
	op()
}

// crashEveryStep runs op once per step it takes (each commit of the store
// and each change of the disk), crashing the Hub just before step k, then
// restarts a Hub over the same store and disk and hands it to check. It
// ends with a run that completes, which must have taken at least minSteps.
func crashEveryStep(t *testing.T, minSteps int, setup func(e *env), op func(e *env), check func(t *testing.T, e *env, crashedAt int)) {
	for k := 1; ; k++ {
		e := newEnv(t)
		setup(e)
		step, crashed := 0, false
		hook := func() {
			if step++; step == k {
				crashed = true
				panic(crash{})
			}
		}
		e.fs.Before = func(string, string) error { hook(); return nil }
		e.store.BeforeCommit = func() error { hook(); return nil }
		survive(func() { op(e) })
		e.fs.Before, e.store.BeforeCommit = nil, nil
		e.restart()
		at := k
		if !crashed {
			at = 0
		}
		t.Run("", func(t *testing.T) { check(t, e, at) })
		if !crashed {
			if k-1 < minSteps {
				t.Fatalf("the operation took only %d steps", k-1)
			}
			return
		}
	}
}

func TestRecoverRenameAtEveryStep(t *testing.T) {
	var a, b string
	crashEveryStep(t, 3,
		func(e *env) {
			a = e.register(e.repo("/home/ann/g/a"))
			b = e.register(e.repo("/home/ann/g/b"))
		},
		func(e *env) { e.RenameFolder(e.ctx, "", "/home/ann/g", "h", false) },
		func(t *testing.T, e *env, crashedAt int) {
			is := is.New(t)
			is.Equal(len(e.journals()), 0)   // every journal was settled
			is.Equal(e.PendingJournals(), 0) // nothing fences changes
			renamed := e.isDir("/home/ann/h")
			is.True(renamed != e.isDir("/home/ann/g")) // exactly one of the folders exists
			want := map[bool]string{false: "/home/ann/g", true: "/home/ann/h"}[renamed]
			is.Equal(e.pathOf(a), want+"/a") // the registry agrees with the disk
			is.Equal(e.pathOf(b), want+"/b") // for every affected workspace
			if crashedAt == 0 {
				is.True(renamed) // the uninterrupted run renamed
			}
			_, err := e.RenameFolder(e.ctx, "", want, "again", false)
			is.NoErr(err) // and folder changes work again
		})
}

func TestRecoverRemoveAtEveryStep(t *testing.T) {
	var id string
	crashEveryStep(t, 4,
		func(e *env) {
			id = e.registerEmpty("/home/ann/a")
			e.start(id) // which makes its data directory
		},
		func(e *env) { e.RemoveFolder(e.ctx, "", "/home/ann/a", true) },
		func(t *testing.T, e *env, crashedAt int) {
			is := is.New(t)
			is.Equal(len(e.journals()), 0) // settled
			removed := !e.isDir("/home/ann/a")
			is.Equal(e.pathOf(id) == "", removed)                    // registered exactly while the folder exists
			is.Equal(e.isDir(fakes.DataDir(id)), e.pathOf(id) != "") // and its data with it
			if crashedAt == 0 {
				is.True(removed) // the uninterrupted run removed
			}
		})
}

// Forgetting a workspace removes its data directory (the child's
// conversation inventory) under a journal: a crash at any step leaves it
// registered with its data, or forgotten with its data gone once the Hub
// has started again.
func TestRecoverForgetAtEveryStep(t *testing.T) {
	var id string
	crashEveryStep(t, 3,
		func(e *env) {
			id = e.register(e.repo("/home/ann/a"))
			e.start(id) // which makes its data directory
			if _, err := e.StopWorkspace(e.ctx, id); err != nil {
				e.t.Fatal(err)
			}
		},
		func(e *env) { e.ForgetWorkspace(e.ctx, id) },
		func(t *testing.T, e *env, crashedAt int) {
			is := is.New(t)
			is.Equal(len(e.journals()), 0)   // settled
			is.Equal(e.PendingJournals(), 0) // nothing fences changes
			registered := e.pathOf(id) != ""
			is.Equal(e.isDir(fakes.DataDir(id)), registered) // the data goes with the registration
			is.True(e.isDir("/home/ann/a"))                  // the folder stays either way
			if crashedAt == 0 {
				is.True(!registered) // the uninterrupted run forgot
			}
		})
}

func TestRecoverCreateConfiguredAtEveryStep(t *testing.T) {
	crashEveryStep(t, 3,
		func(e *env) { e.dir("/home/ann/src") },
		func(e *env) {
			e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "n", DisplayName: "n"})
		},
		func(t *testing.T, e *env, crashedAt int) {
			is := is.New(t)
			is.Equal(len(e.journals()), 0) // settled
			registered := e.pathOf("n") != ""
			if registered {
				is.True(e.isDir("/home/ann/src/n/.git")) // a registration always has its repository
			}
			if crashedAt == 0 {
				is.True(registered) // the uninterrupted run registered
			}
			// Whatever the crash left, configuring the folder, or creating
			// it again, now succeeds.
			if !registered {
				e.dir("/home/ann/src/n")
				_, err := e.Configure(e.ctx, hub.ConfigureRequest{Path: "/home/ann/src/n", DisplayName: "n", Init: true})
				is.NoErr(err) // retry through configure
			}
		})
}

func TestAmbiguousJournalStaysPending(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.register(e.repo("/home/ann/a"))
	e.fs.Before = func(op, p string) error {
		if op == "rename" {
			panic(crash{})
		}
		return nil
	}
	func() {
		defer func() { recover() }()
		e.RenameFolder(e.ctx, "", "/home/ann/a", "b", false)
	}()
	e.fs.Before = nil
	e.dir("/home/ann/b") // someone made the destination meanwhile: both exist
	e.restart()
	is.Equal(e.PendingJournals(), 1)      // the journal cannot be settled from the disk
	is.Equal(e.pathOf(id), "/home/ann/a") // the registry is left as it was
	_, err := e.RenameFolder(e.ctx, "", "/home/ann/a", "c", false)
	is.Equal(hub.KindOf(err), hub.Conflict) // changes stay fenced
}

func TestRecoverConfigureWithInitAtEveryStep(t *testing.T) {
	crashEveryStep(t, 3,
		func(e *env) { e.dir("/home/ann/plain") },
		func(e *env) {
			e.Configure(e.ctx, hub.ConfigureRequest{Path: "/home/ann/plain", DisplayName: "p", Init: true, Start: true})
		},
		func(t *testing.T, e *env, crashedAt int) {
			is := is.New(t)
			is.Equal(len(e.journals()), 0)   // settled
			is.Equal(e.PendingJournals(), 0) // nothing fenced
			registered := e.pathOf("plain") != ""
			if registered {
				is.True(e.isDir("/home/ann/plain/.git")) // a registration always has its repository
			}
			if crashedAt == 0 {
				is.True(registered)         // the uninterrupted run registered
				is.True(e.Running("plain")) // and the session runs again after the restart
			}
		})
}

func TestRecoverFolderCreateAtEveryStep(t *testing.T) {
	crashEveryStep(t, 1,
		func(e *env) { e.dir("/home/ann/src") },
		func(e *env) { e.CreateFolder(e.ctx, "", "/home/ann/src", "new") },
		func(t *testing.T, e *env, crashedAt int) {
			is := is.New(t)
			is.Equal(e.isDir("/home/ann/src/new"), crashedAt == 0) // all or nothing
			_, err := e.CreateFolder(e.ctx, "", "/home/ann/src", "other")
			is.NoErr(err) // and nothing fences later changes
		})
}
