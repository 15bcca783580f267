package service_test

import (
	"context"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func TestStatsCountLoginsByOutcome(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	login := func(password string) error {
		_, err := e.Login(e.ctx, hub.LoginRequest{Name: "ann", Password: password, ClientAddr: "192.0.2.1"})
		return err
	}
	is.NoErr(login("correct horse battery")) // a login
	for range 5 {
		is.Equal(hub.KindOf(login("wrong")), hub.Unauthenticated) // a failure
	}
	is.Equal(hub.KindOf(login("wrong")), hub.RateLimited)                // the address's budget is spent: refused
	is.Equal(hub.KindOf(e.CheckLoginRate("192.0.2.1")), hub.RateLimited) // refused before the body, too
	st, err := e.Stats(e.ctx)
	is.NoErr(err)                         // stats
	is.Equal(st.Logins, uint64(1))        // one success
	is.Equal(st.LoginFailures, uint64(5)) // five wrong passwords
	is.Equal(st.LoginRefusals, uint64(2)) // two refusals by the limits
}

func TestStatsCountWorkspaceSessionsStartedStoppedAndCrashed(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	a := e.register(e.repo("/home/ann/a"))
	b := e.register(e.repo("/home/ann/b"))
	c := e.register(e.repo("/home/ann/c"))
	e.start(a)
	e.start(b)
	e.start(c)
	st, err := e.Stats(e.ctx)
	is.NoErr(err)                         // stats
	is.Equal(st.Workspaces, 3)            // three registered
	is.Equal(st.WorkspaceSessions, 3)     // three running
	is.Equal(st.SessionStarts, uint64(3)) // three started
	_, err = e.StopWorkspace(e.ctx, a)
	is.NoErr(err) // a stopped
	e.backend.Crash(b)
	is.NoErr(e.Close()) // c stopped by the shutdown; Close waits for the watchers
	st, err = e.Stats(context.Background())
	is.NoErr(err)                          // stats of a closed Hub still read
	is.Equal(st.WorkspaceSessions, 0)      // none running
	is.Equal(st.SessionStops, uint64(2))   // a by its stop, c by the shutdown
	is.Equal(st.SessionCrashes, uint64(1)) // b ended on its own
	is.Equal(st.SessionStarts, uint64(3))  // unchanged
}

func TestStatsCountRecoveredAndPendingJournals(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.register(e.repo("/home/ann/a"))
	e.register(e.repo("/home/ann/x"))
	crashRename := func(from, to string) {
		e.fs.Before = func(op, p string) error {
			if op == "rename" {
				panic(crash{})
			}
			return nil
		}
		func() {
			defer func() { recover() }()
			e.RenameFolder(e.ctx, "", from, to, false)
		}()
		e.fs.Before = nil
	}
	crashRename("/home/ann/a", "b")
	e.restart()
	st, err := e.Stats(e.ctx)
	is.NoErr(err)                             // stats
	is.Equal(st.JournalsRecovered, uint64(1)) // the interrupted rename was settled
	is.Equal(st.JournalsPending, 0)           // nothing left
	crashRename("/home/ann/x", "y")
	e.dir("/home/ann/y") // both exist: this one cannot be settled
	e.restart()
	st, err = e.Stats(e.ctx)
	is.NoErr(err)                             // stats
	is.Equal(st.JournalsRecovered, uint64(0)) // a new Hub counts afresh, and settled nothing
	is.Equal(st.JournalsPending, 1)           // one left pending
}

func TestStatsReportEveryCloneResultAndCredentialPurpose(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	st, err := e.Stats(e.ctx)
	is.NoErr(err)                                                                                            // stats
	is.Equal(len(st.CloneJobsFinished), len(service.CloneStatuses))                                          // one count per clone result, zero included
	is.Equal(len(st.CredentialUses), 6)                                                                      // three purposes, allowed or not
	is.Equal(st.CredentialUses[2], service.CredentialUseCount{Purpose: hub.PurposeSignature, Allowed: true}) // signatures among them
}
