package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func TestAHubIsReadyOnlyOnceRecovered(t *testing.T) {
	is := is.New(t)
	clock := fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	fsys := fakes.NewFS(home)
	h, err := service.New(service.Config{Password: cheap}, service.Ports{Store: fakes.NewStore(), Clock: clock, FS: fsys, Git: fakes.NewGit(fsys),
		Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(clock), Tools: fakes.NewToolProber(),
		AgentLogins: fakes.NewAgentLogins(fakes.NewFakeAgent("codex", "Codex")), Pusher: fakes.NewPusher()})
	is.NoErr(err) // the Hub is built
	t.Cleanup(func() { h.Close() })
	is.Equal(hub.KindOf(h.Ready(t.Context())), hub.Unavailable) // not ready before recovery
	is.NoErr(h.Recover(t.Context()))                            // recovery completes
	is.NoErr(h.Ready(t.Context()))                              // ready once it has
}

func TestAPendingJournalMakesTheHubNotReady(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.register(e.repo("/home/ann/a"))
	is.NoErr(e.Ready(e.ctx)) // ready before the crash
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
	e.dir("/home/ann/b") // both exist: the journal cannot be settled
	e.restart()
	is.Equal(e.PendingJournals(), 1)                      // the journal stays pending
	is.Equal(hub.KindOf(e.Ready(e.ctx)), hub.Unavailable) // so the Hub is not ready
}

func TestAHubShuttingDownIsNotReady(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(*service.Hub)
	}{
		{"drained", (*service.Hub).Drain},
		{"closed", func(h *service.Hub) { h.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			e := newEnv(t)
			is.NoErr(e.Ready(e.ctx)) // ready while serving
			tc.stop(e.Hub)
			is.Equal(hub.KindOf(e.Ready(e.ctx)), hub.Unavailable) // not ready once shutting down
		})
	}
}

func TestAStoreThatFailsAWriteMakesTheHubNotReadyForOneProbe(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	is.NoErr(e.Ready(e.ctx)) // ready: the store took the probe's write
	e.store.FailNextCommit(errors.New("disk I/O error"))
	is.NoErr(e.Ready(e.ctx)) // within a second the last probe's answer stands: no second write
	e.clock.Advance(time.Second)
	is.Equal(hub.KindOf(e.Ready(e.ctx)), hub.Unavailable) // the next probe's write failed
	is.Equal(hub.KindOf(e.Ready(e.ctx)), hub.Unavailable) // and its answer stands for a second
	e.clock.Advance(time.Second)
	is.NoErr(e.Ready(e.ctx)) // the store takes writes again
}

// stuckStore's writes wait for their context once stuck, as a database
// whose lock another process holds would.
type stuckStore struct {
	hub.Store
	stuck   chan struct{} // closed to stick
	entered chan struct{} // receives once a stuck write waits
}

func (s *stuckStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	select {
	case <-s.stuck:
		s.entered <- struct{}{}
		<-ctx.Done()
		return hub.Wrap(hub.Internal, ctx.Err(), "database is locked")
	default:
		return s.Store.Update(ctx, fn)
	}
}

func TestAStoreThatCannotTakeAWriteMakesTheHubNotReadyWithinTheBound(t *testing.T) {
	is := is.New(t)
	clock := fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	fsys := fakes.NewFS(home)
	store := &stuckStore{Store: fakes.NewStore(), stuck: make(chan struct{}), entered: make(chan struct{}, 1)}
	h, err := service.New(service.Config{Password: cheap}, service.Ports{Store: store, Clock: clock, FS: fsys, Git: fakes.NewGit(fsys),
		Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(clock), Tools: fakes.NewToolProber(),
		AgentLogins: fakes.NewAgentLogins(fakes.NewFakeAgent("codex", "Codex")), Pusher: fakes.NewPusher()})
	is.NoErr(err) // the Hub is built
	t.Cleanup(func() { h.Close() })
	is.NoErr(h.Recover(t.Context())) // recovered
	close(store.stuck)
	clock.Advance(time.Second) // past the last probe's answer, if any
	ready := make(chan error, 1)
	go func() { ready <- h.Ready(t.Context()) }()
	wait(t, store.entered)
	clock.Advance(2 * time.Second)                        // the probe's bound
	is.Equal(hub.KindOf(wait(t, ready)), hub.Unavailable) // a write that does not come in time is not ready
}
