package porttest

import (
	"context"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// Adopter runs the hub.SessionAdopter contract (with the
// hub.SessionDetacher of its sessions): newHub returns the backend of one
// Hub on a machine, a further call another Hub's of the same machine, and
// dir an existing directory there. Every session it starts is stopped.
func Adopter(t *testing.T, newHub func(t *testing.T) (b hub.Backend, dir string)) {
	ctx := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), backendTimeout)
		t.Cleanup(cancel)
		return ctx
	}
	adopter := func(t *testing.T, b hub.Backend) hub.SessionAdopter {
		t.Helper()
		a, ok := b.(hub.SessionAdopter)
		if !ok {
			t.Fatalf("%s adopts no session", b.Name())
		}
		return a
	}
	ended := func(rs hub.WorkspaceSession) bool {
		select {
		case <-rs.Done():
			return true
		case <-time.After(backendTimeout):
			return false
		}
	}

	t.Run("NothingToAdoptIsNotFound", func(t *testing.T) {
		is := is.New(t)
		b, dir := newHub(t)
		_, err := adopter(t, b).Adopt(ctx(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir})
		is.Equal(hub.KindOf(err), hub.NotFound) // no session of the workspace runs
	})

	t.Run("ASessionLetGoIsAdoptedOnceByTheNextHub", func(t *testing.T) {
		is := is.New(t)
		first, dir := newHub(t)
		spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir}
		rs, err := first.Start(ctx(t), spec)
		is.NoErr(err)
		t.Cleanup(func() { stopSession(t, rs) })
		d, ok := rs.(hub.SessionDetacher)
		is.True(ok) // its sessions can be let go
		d.Detach()
		is.True(ended(rs)) // Done, for the Hub that let it go
		d.Detach()         // a second time is a no-op

		next, _ := newHub(t)
		a, err := adopter(t, next).Adopt(ctx(t), spec)
		is.NoErr(err) // the next Hub adopts it
		t.Cleanup(func() { stopSession(t, a) })
		_, err = a.Facts(ctx(t))
		is.NoErr(err) // and it answers
		_, err = adopter(t, next).Adopt(ctx(t), spec)
		is.Equal(hub.KindOf(err), hub.NotFound) // once
		_, err = next.Start(ctx(t), spec)
		is.Equal(hub.KindOf(err), hub.Conflict) // and it runs, for that Hub

		is.NoErr(a.Stop(ctx(t))) // stopped
		is.True(ended(a))
		_, err = adopter(t, next).Adopt(ctx(t), spec)
		is.Equal(hub.KindOf(err), hub.NotFound) // there is nothing left to adopt
	})

	t.Run("AnAdoptedSessionCanBeLetGoAgain", func(t *testing.T) {
		is := is.New(t)
		first, dir := newHub(t)
		spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir}
		rs, err := first.Start(ctx(t), spec)
		is.NoErr(err)
		rs.(hub.SessionDetacher).Detach()
		next, _ := newHub(t)
		a, err := adopter(t, next).Adopt(ctx(t), spec)
		is.NoErr(err)
		a.(hub.SessionDetacher).Detach() // as at a second restart
		is.True(ended(a))
		third, _ := newHub(t)
		again, err := adopter(t, third).Adopt(ctx(t), spec)
		is.NoErr(err) // the third Hub adopts it
		is.NoErr(again.Stop(ctx(t)))
	})
}
