package service_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// stateOf returns id's view in the Hub state, failing the test when id is
// not listed.
func (e *env) stateOf(id string) hub.WorkspaceView {
	e.t.Helper()
	st, err := e.State(e.ctx, e.ann)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, v := range st.Workspaces {
		if v.ID == id {
			return v
		}
	}
	e.t.Fatalf("%s is not listed", id)
	return hub.WorkspaceView{}
}

// Listings are reused between requests; each kind of change must still
// show in the next state answer, without waiting for the facts TTL.
func TestStateShowsEveryChangeAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/app"))
		is.Equal(e.stateOf(id).DisplayName, "app") // listed

		_, err := e.SetDisplayName(e.ctx, id, "Shop")
		is.NoErr(err)                               // rename
		is.Equal(e.stateOf(id).DisplayName, "Shop") // a registry write shows at once

		e.start(id)
		is.True(e.stateOf(id).Running) // a start shows at once

		e.backend.Crash(id)
		synctest.Wait()                 // the Hub's watcher has seen the session end
		is.True(!e.stateOf(id).Running) // a crash shows at once

		e.start(id)
		_, err = e.StopWorkspace(e.ctx, id)
		is.NoErr(err)                   // stop
		is.True(!e.stateOf(id).Running) // a stop shows at once

		other := e.register(e.repo("/home/ann/lib"))
		st, err := e.State(e.ctx, e.ann)
		is.NoErr(err)                   // state
		is.Equal(len(st.Workspaces), 2) // a registration shows at once
		is.Equal(st.Workspaces[1].ID, other)
	})
}

// Facts (here a branch) are refreshed in the background once FactsTTL has
// passed; the state built from the stale facts must not outlive the
// refresh, and a refresh that finds nothing new keeps the state it had.
func TestStateShowsRefreshedFactsOnceTheyArrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/app"))
		is.Equal(e.stateOf(id).Branch, "main") // listed on its branch

		e.git.SetBranch("/home/ann/app", "dev")
		is.Equal(e.stateOf(id).Branch, "main") // within the TTL the cached facts are shown

		e.clock.Advance(2 * time.Second)
		is.Equal(e.stateOf(id).Branch, "main") // stale facts are shown while they refresh
		synctest.Wait()                        // the refresh has ended
		is.Equal(e.stateOf(id).Branch, "dev")  // and the next state shows it

		prev, err := e.State(e.ctx, e.ann)
		is.NoErr(err) // state
		again, err := e.State(e.ctx, e.ann)
		is.NoErr(err)                                               // state again
		is.Equal(again.WorkspacesRevision, prev.WorkspacesRevision) // nothing changed: the same state
		e.clock.Advance(2 * time.Second)
		_, err = e.State(e.ctx, e.ann)
		is.NoErr(err)   // state after the TTL, which refreshes the facts
		synctest.Wait() // the refresh has ended
		later, err := e.State(e.ctx, e.ann)
		is.NoErr(err)                                               // and the next state
		is.Equal(later.WorkspacesRevision, prev.WorkspacesRevision) // is the same: the refresh found nothing new
		is.True(later == prev)                                      // the very same snapshot
	})
}

// A mutation the core refuses (a rename of a workspace that is not
// registered, a revocation of an unknown session) writes nothing, so the
// state answer stays the very same snapshot; a commit the store fails may
// have written, so the next answer reads the store again.
func TestRefusedMutationKeepsTheState(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.register(e.repo("/home/ann/app"))
	prev, err := e.State(e.ctx, e.ann)
	is.NoErr(err) // state
	_, err = e.SetDisplayName(e.ctx, "no-such-workspace", "X")
	is.Equal(hub.KindOf(err), hub.NotFound) // refused
	_, err = e.RevokeDeviceSession(e.ctx, e.ann, "no-such-handle")
	is.Equal(hub.KindOf(err), hub.NotFound) // refused
	again, err := e.State(e.ctx, e.ann)
	is.NoErr(err)          // state again
	is.True(again == prev) // the very same snapshot

	e.store.FailNextCommit(errors.New("disk full"))
	_, err = e.SetDisplayName(e.ctx, id, "Renamed")
	is.True(err != nil) // the store failed the commit
	after, err := e.State(e.ctx, e.ann)
	is.NoErr(err)                                                      // state after the failure
	is.True(after != prev)                                             // built again from the store
	is.Equal(after.WorkspacesRevision > prev.WorkspacesRevision, true) // under a new revision
}
