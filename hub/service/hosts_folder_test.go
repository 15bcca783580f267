package service_test

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// registerOn registers a repository at p on the host of backend, made
// there first, and returns its id.
func (e *env) registerOn(m *fakes.Machine, backend, p string, empty bool) string {
	e.t.Helper()
	m.FS.MkdirAll(p)
	if err := m.Git.Init(e.ctx, p); err != nil {
		e.t.Fatal(err)
	}
	w, err := e.Register(e.ctx, hub.RegisterRequest{Path: p, Backend: backend})
	if err != nil {
		e.t.Fatalf("register %s on %s: %v", p, backend, err)
	}
	if empty {
		if err := m.FS.RemoveEmpty(p + "/.git"); err != nil {
			e.t.Fatal(err)
		}
	}
	return w.ID
}

func machineIsDir(m *fakes.Machine, p string) bool {
	fi, err := m.FS.Lstat(p)
	return err == nil && fi.IsDir()
}

func TestRenamingAndRemovingOnAHostTouchOnlyItsDiskAndItsWorkspaces(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	a := e.registerOn(gpu, "ssh:gpu", "/srv/g/a", false)
	b := e.registerOn(gpu, "ssh:gpu", "/srv/g/b", false)
	here := e.register(e.repo("/srv/g/a")) // the same path on the Hub's machine

	res, err := e.RenameFolder(e.ctx, "ssh:gpu", "/srv/g", "h", false)
	is.NoErr(err)                          // renamed on the host
	is.Equal(res.Path, "/srv/h")           // to its new path there
	is.Equal(len(res.WorkspaceIDs), 2)     // both of its workspaces followed
	is.True(machineIsDir(gpu, "/srv/h/a")) // the host's disk changed
	is.True(!machineIsDir(gpu, "/srv/g"))  // in place
	is.True(e.isDir("/srv/g/a"))           // the Hub's did not
	is.Equal(e.pathOf(a), "/srv/h/a")      // the host's workspaces follow
	is.Equal(e.pathOf(b), "/srv/h/b")      // every one
	is.Equal(e.pathOf(here), "/srv/g/a")   // the Hub's stays
	is.Equal(len(e.journals()), 0)         // nothing is left pending
	_, err = e.RenameFolder(e.ctx, "ssh:gpu", "/srv/g", "x", false)
	is.Equal(hub.KindOf(err), hub.NotFound) // the old path is gone there
	_, err = e.RenameFolder(e.ctx, "ssh:nowhere", "/srv/h", "x", false)
	is.Equal(hub.KindOf(err), hub.Invalid) // an unknown machine

	e.start(a)
	_, err = e.RenameFolder(e.ctx, "ssh:gpu", "/srv/h", "i", false)
	is.True(errDetails(err) != nil && errDetails(err).StopConflict) // a running session there refuses
	is.Equal(errDetails(err).WorkspaceIDs, []string{a})             // naming it
	_, err = e.StopWorkspace(e.ctx, a)
	is.NoErr(err)

	gone := e.registerOn(gpu, "ssh:gpu", "/srv/empty", true)
	e.start(gone) // which makes its data there
	is.True(machineIsDir(gpu, fakes.DataDir(gone)))
	_, err = e.RemoveFolder(e.ctx, "ssh:gpu", "/srv/h/a", false)
	is.Equal(hub.KindOf(err), hub.Conflict) // a folder with content stays
	_, err = e.RemoveFolder(e.ctx, "ssh:gpu", "/srv/empty", false)
	is.True(errDetails(err) != nil && errDetails(err).StopConflict) // a running one needs stop
	out, err := e.RemoveFolder(e.ctx, "ssh:gpu", "/srv/empty", true)
	is.NoErr(err)                                    // removed with stop
	is.Equal(out.WorkspaceID, gone)                  // forgetting its workspace
	is.True(!machineIsDir(gpu, "/srv/empty"))        // gone from the host
	is.Equal(e.pathOf(gone), "")                     // and from the registry
	is.True(!machineIsDir(gpu, fakes.DataDir(gone))) // its data removed there
	is.Equal(len(e.journals()), 0)                   // nothing pending
}

// A rename on a host, crashed at every step, is settled by the next Hub
// once the host answers, in the background of its start.
func TestRecoverARenameOnAHostAtEveryStep(t *testing.T) {
	for k := 1; ; k++ {
		done := false
		t.Run(fmt.Sprint("crash before step ", k), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				done = crashOnHostAt(t, k)
			})
		})
		if done || t.Failed() {
			if k < 4 {
				t.Fatalf("the rename took only %d steps", k-1)
			}
			return
		}
	}
}

// crashOnHostAt renames a folder holding two workspaces on a host,
// crashing before step k (each commit and each change of the host's
// disk), restarts the Hub, and checks what it settled. It reports whether
// the rename ran to its end without a crash.
func crashOnHostAt(t *testing.T, k int) (completed bool) {
	is := is.New(t)
	e := newEnv(t)
	e.addHost("gpu")
	gpu := e.hosts.Machine("gpu")
	a := e.registerOn(gpu, "ssh:gpu", "/srv/g/a", false)
	b := e.registerOn(gpu, "ssh:gpu", "/srv/g/b", false)
	step, crashed := 0, false
	hook := func() {
		if step++; step == k {
			crashed = true
			panic(crash{})
		}
	}
	gpu.FS.Before = func(string, string) error { hook(); return nil }
	e.store.BeforeCommit = func() error { hook(); return nil }
	survive(func() { e.RenameFolder(e.ctx, "ssh:gpu", "/srv/g", "h", false) })
	gpu.FS.Before, e.store.BeforeCommit = nil, nil
	e.restart()
	synctest.Wait() // the host's journals are settled in the background

	is.Equal(len(e.journals()), 0)   // every journal was settled
	is.Equal(e.PendingJournals(), 0) // nothing fences changes
	renamed := machineIsDir(gpu, "/srv/h")
	is.True(renamed != machineIsDir(gpu, "/srv/g")) // exactly one of the folders exists there
	want := map[bool]string{false: "/srv/g", true: "/srv/h"}[renamed]
	is.Equal(e.pathOf(a), want+"/a") // the registry agrees with the host's disk
	is.Equal(e.pathOf(b), want+"/b") // for every affected workspace
	if !crashed {
		is.True(renamed) // the uninterrupted run renamed
	}
	_, err := e.RenameFolder(e.ctx, "ssh:gpu", want, "again", false)
	is.NoErr(err) // and folder changes work again
	return !crashed
}

// A journal pending on a host that does not answer at the Hub's start
// stays pending, fencing folder changes, and is settled by a later start
// once the host is back.
func TestAFolderJournalOnAnUnreachableHostStaysPendingUntilItAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.addHost("gpu")
		gpu := e.hosts.Machine("gpu")
		a := e.registerOn(gpu, "ssh:gpu", "/srv/g/a", false)
		local := e.register(e.repo("/home/ann/app"))
		e.start(local)                                              // running when the Hub stops
		gpu.FS.Before = func(op, p string) error { panic(crash{}) } // after the journal, before the disk
		survive(func() { e.RenameFolder(e.ctx, "ssh:gpu", "/srv/g", "h", false) })
		gpu.FS.Before = nil
		is.Equal(len(e.journals()), 1) // the crash left the journal

		gpu.FailCheck(hub.Wrap(hub.Unavailable, errors.New("no route"), "host gpu cannot be reached"))
		e.restart()
		synctest.Wait()
		is.Equal(len(e.journals()), 1)   // the journal stays
		is.Equal(e.PendingJournals(), 1) // pending
		_, err := e.CreateFolder(e.ctx, "", e.dir("/home/ann/x"), "y")
		is.Equal(hub.KindOf(err), hub.Conflict) // fencing folder changes
		is.Equal(e.pathOf(a), "/srv/g/a")       // the registry untouched
		is.True(e.Running(local))               // but the Hub's own workspaces start again

		gpu.FailCheck(nil)
		e.restart()
		synctest.Wait()
		is.Equal(len(e.journals()), 0)    // settled once the host answers
		is.Equal(e.PendingJournals(), 0)  // fencing nothing
		is.Equal(e.pathOf(a), "/srv/g/a") // the rename never happened there
		_, err = e.CreateFolder(e.ctx, "", "/home/ann/x", "y")
		is.NoErr(err) // folder changes work again
	})
}

// A worktree create on a host interrupted before its registration is
// completed by the next Hub once the host answers, in the background of
// its start, and fences nothing meanwhile.
func TestAWorktreeCreateInterruptedOnAHostIsCompletedOnceTheHostAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.addHost("gpu")
		gpu := e.hosts.Machine("gpu")
		app := e.registerOn(gpu, "ssh:gpu", "/srv/app", false)
		gpu.Git.SetRefs("/srv/app", []string{"main"}, nil)
		gpu.Git.FailNext("write-stamp", errors.New("disk full")) // git made the tree there; the Hub cannot stamp it
		res, err := e.CreateWorktree(e.ctx, e.ann, hub.CreateWorktreeRequest{SourceWorkspaceID: app, Mode: hub.NewBranch,
			Branch: "feature", BaseRef: "main"})
		is.NoErr(err)
		is.Equal(res.Error.Code, hub.WTIdentityUncertain) // so it is not registered
		is.Equal(len(e.journals()), 1)                    // and its journal stays

		gpu.FailCheck(hub.Errorf(hub.Unavailable, "host gpu cannot be reached"))
		e.restart()
		synctest.Wait()
		is.Equal(len(e.journals()), 1)   // waiting for the host
		is.Equal(e.PendingJournals(), 0) // fencing nothing
		_, err = e.CreateFolder(e.ctx, "", e.dir("/home/ann/x"), "y")
		is.NoErr(err) // folder changes go on

		gpu.FailCheck(nil)
		e.restart()
		synctest.Wait()
		is.Equal(len(e.journals()), 0) // completed once the host answers
		c, ok := e.checkout(app, "/srv/app.worktrees/feature")
		is.True(ok && c.Registered)                      // registered
		is.Equal(c.Ownership, hub.OwnedByWharf)          // as the Hub's
		is.Equal(backendOf(e, c.WorkspaceID), "ssh:gpu") // a workspace of the host
	})
}
