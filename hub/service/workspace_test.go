package service_test

import (
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestRegisterLegacy(t *testing.T) {
	t.Run("starts by default when asked and lists the workspace", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		p := e.repo("/home/ann/wharf")
		act, err := e.Register(e.ctx, hub.RegisterRequest{Path: p, Start: true})
		is.NoErr(err)                       // registered
		is.Equal(act.ID, "wharf")           // id from the folder name
		is.True(act.Running)                // and started
		is.True(e.backend.Running("wharf")) // a session runs
		ws, err := e.Workspaces(e.ctx)
		is.NoErr(err)
		is.Equal(len(ws), 1)                     // one workspace
		is.Equal(ws[0].DisplayName, "wharf")     // basename as display name
		is.Equal(ws[0].Backend, "local")         // local backend
		is.True(ws[0].Running)                   // running
		is.Equal(ws[0].Branch, "main")           // the repository's branch
		is.True(ws[0].RepositoryID != "")        // and identity
		is.Equal(ws[0].WorkspaceAPIRevision, 24) // the child's revision
		is.True(ws[0].Shells != nil)             // a running child reports its shells
		is.Equal(len(ws[0].Authentication), 0)   // no assignments
	})
	t.Run("start false registers stopped", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		act, err := e.Register(e.ctx, hub.RegisterRequest{Path: e.repo("/home/ann/a")})
		is.NoErr(err)
		is.True(!act.Running)                     // stopped
		is.Equal(e.backend.StartCount(act.ID), 0) // nothing started
	})
	t.Run("not a repository needs init", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		p := e.dir("/home/ann/plain")
		_, err := e.Register(e.ctx, hub.RegisterRequest{Path: p})
		is.Equal(hub.KindOf(err), hub.Conflict)                                 // 409
		is.Equal(hub.MessageOf(err), "/home/ann/plain is not a git repository") // says why
		is.True(errDetails(err).NeedsInit)                                      // offers init
		is.Equal(len(e.workspaces()), 0)                                        // nothing registered
		is.Equal(len(e.journals()), 0)                                          // no journal left
		act, err := e.Register(e.ctx, hub.RegisterRequest{Path: p, Init: true})
		is.NoErr(err)                 // init confirmed
		is.True(e.isDir(p + "/.git")) // repository created
		is.Equal(e.pathOf(act.ID), p) // and registered
	})
	t.Run("git that cannot tell does not block registration", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		p := e.dir("/home/ann/odd")
		e.git.FailNext("inspect", errors.New("safe.directory"))
		_, err := e.Register(e.ctx, hub.RegisterRequest{Path: p})
		is.NoErr(err) // indeterminate: registered without an init offer
	})
	t.Run("re-registration returns the same workspace", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		p := e.repo("/home/ann/a")
		id := e.register(p)
		act, err := e.Register(e.ctx, hub.RegisterRequest{Path: p + "/", Start: true})
		is.NoErr(err)                    // idempotent
		is.Equal(act.ID, id)             // same id
		is.True(act.Running)             // started as asked
		is.Equal(len(e.workspaces()), 1) // still one
	})
	t.Run("bad paths", func(t *testing.T) {
		e := newEnv(t)
		e.repo("/home/ann/real")
		e.fs.Symlink("/home/ann/real", "/home/ann/link")
		e.fs.WriteFile("/home/ann/file")
		for _, tc := range []struct {
			name, path string
			kind       hub.Kind
			msg        string
		}{
			{"empty", "", hub.Invalid, "an absolute folder path is required"},
			{"relative", "home/ann/real", hub.Invalid, "an absolute folder path is required"},
			{"bare name", "real", hub.Invalid, "an absolute folder path is required"},
			{"NUL", "/home/ann/re\x00al", hub.Invalid, "an absolute folder path is required"},
			{"missing", "/home/ann/nope", hub.NotFound, "folder was not found"},
			{"dot dot to missing", "/home/ann/real/../nope", hub.NotFound, "folder was not found"},
			{"symlink", "/home/ann/link", hub.Invalid, "folder path must name a direct non-symbolic-link directory"},
			{"file", "/home/ann/file", hub.Invalid, "folder path is not a directory"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := e.Register(e.ctx, hub.RegisterRequest{Path: tc.path, Start: true})
				is.Equal(hub.KindOf(err), tc.kind)   // status
				is.Equal(hub.MessageOf(err), tc.msg) // message
				is.Equal(len(e.workspaces()), 0)     // nothing registered
			})
		}
	})
	t.Run("a symlinked ancestor is canonicalized", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.repo("/srv/code/a")
		e.fs.Symlink("/srv/code", "/home/ann/code")
		id := e.register("/home/ann/code/a")
		is.Equal(e.pathOf(id), "/srv/code/a") // the canonical path is stored
		again := e.register("/srv/code/a")
		is.Equal(again, id) // the canonical path finds the same workspace
	})
}

func TestWorkspaceIDsAreNeverReused(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	first := e.register(e.repo("/home/ann/one/docs"))
	second := e.register(e.repo("/home/ann/two/docs"))
	is.Equal(first, "docs")    // the base
	is.Equal(second, "docs-2") // a colliding base gets a suffix
	_, err := e.ForgetWorkspace(e.ctx, first)
	is.NoErr(err) // forget the first
	third := e.register(e.repo("/home/ann/three/docs"))
	is.Equal(third, "docs-3") // the forgotten id is not given to another folder
	again := e.register("/home/ann/one/docs")
	is.Equal(again, "docs-4") // not even to the same folder registered again
}

func TestForget(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.repo("/home/ann/a")
	id := e.register(p)
	e.start(id)
	_, err := e.ForgetWorkspace(e.ctx, id)
	is.Equal(hub.KindOf(err), hub.Conflict)                                       // running cannot be forgotten
	is.Equal(hub.MessageOf(err), "stop the session for 'a' before forgetting it") // says what to do
	_, err = e.StopWorkspace(e.ctx, id)
	is.NoErr(err)
	_, err = e.PatchPersonalState(e.ctx, e.ann, id, hub.PersonalStatePatch{Follow: set(true)})
	is.NoErr(err)
	act, err := e.ForgetWorkspace(e.ctx, id)
	is.NoErr(err)              // forgotten
	is.True(act.Forgotten)     // says so
	is.True(e.isDir(p))        // files kept
	is.Equal(e.pathOf(id), "") // unregistered
	_, err = e.ForgetWorkspace(e.ctx, id)
	is.Equal(hub.KindOf(err), hub.NotFound)              // twice: unknown
	is.Equal(hub.MessageOf(err), "unknown workspace: a") // message
	res, err := e.Browse(e.ctx, "", home)
	is.NoErr(err)
	is.Equal(res.Dirs[0].RegisteredID, "") // listed as unregistered
}

func TestDisplayName(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.register(e.repo("/home/ann/a"))
	e.start(id)
	v, err := e.SetDisplayName(e.ctx, id, "  Docs site  ")
	is.NoErr(err)                         // allowed while running
	is.Equal(v.DisplayName, "Docs site")  // trimmed
	is.True(v.Running)                    // the session is untouched
	is.Equal(e.backend.StartCount(id), 1) // not restarted
	_, err = e.SetDisplayName(e.ctx, "nope", "x")
	is.Equal(hub.KindOf(err), hub.NotFound) // unknown id
	_, err = e.SetDisplayName(e.ctx, "nope", "")
	is.Equal(hub.KindOf(err), hub.Invalid) // validation comes first: 400 only for the name
	e.store.FailNextCommit(errors.New("disk full"))
	_, err = e.SetDisplayName(e.ctx, id, "Other")
	is.Equal(hub.KindOf(err), hub.Internal)                                       // persistence failure
	is.Equal(hub.MessageOf(err), "workspace display name could not be persisted") // the contract's text
	is.Equal(e.workspaces()[0].DisplayName, "Docs site")                          // nothing half-written
}

func TestStartStop(t *testing.T) {
	t.Run("concurrent starts join one start", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/a"))
		release := e.backend.Hold()
		done := make(chan error, 3)
		for range 3 {
			go func() { _, err := e.StartWorkspace(e.ctx, id); done <- err }()
		}
		release()
		for range 3 {
			is.NoErr(wait(t, done)) // every start succeeds
		}
		is.Equal(e.backend.StartCount(id), 1) // one session was started
		is.True(e.Running(id))                // and runs
	})
	t.Run("a stop waits for the start in flight", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/a"))
		release := e.backend.Hold()
		started := make(chan error, 1)
		go func() { _, err := e.StartWorkspace(e.ctx, id); started <- err }()
		is.NoErr(e.backend.WaitHeld(e.ctx, 1)) // the start is in flight
		stopped := make(chan hub.WorkspaceAction, 1)
		go func() { act, _ := e.StopWorkspace(e.ctx, id); stopped <- act }()
		release()
		is.NoErr(wait(t, started))
		act := wait(t, stopped)
		is.True(*act.WasRunning)        // the stop found the started session
		is.True(!e.backend.Running(id)) // and stopped it
		is.True(!e.Running(id))         // the Hub agrees
	})
	t.Run("a failed start says why and leaves it stopped", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/a"))
		e.backend.FailNextStart(hub.Errorf(hub.Internal, "session exited before it was ready (exit status 1)"))
		_, err := e.StartWorkspace(e.ctx, id)
		is.Equal(hub.KindOf(err), hub.Internal) // 500
		is.Equal(hub.MessageOf(err), "session for 'a' failed to start: session exited before it was ready (exit status 1)")
		is.True(!e.Running(id)) // stopped
	})
	t.Run("unknown ids", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		_, err := e.StartWorkspace(e.ctx, "nope")
		is.Equal(hub.KindOf(err), hub.NotFound) // start
		_, err = e.StopWorkspace(e.ctx, "nope")
		is.Equal(hub.KindOf(err), hub.NotFound) // stop
	})
	t.Run("a session that dies on its own is stopped and not restarted", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/a"))
		e.start(id)
		e.backend.Crash(id)
		is.True(!e.Running(id))               // seen as stopped at once
		e.restart()                           // Close waits for the Hub's watcher to record the stop
		is.True(!e.workspaces()[0].AutoStart) // recorded as stopped
		is.True(!e.Running(id))               // so not started again
	})
	t.Run("sessions running when the Hub stopped start again", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		a := e.register(e.repo("/home/ann/a"))
		b := e.register(e.repo("/home/ann/b"))
		e.start(a)
		e.start(b)
		_, err := e.StopWorkspace(e.ctx, b)
		is.NoErr(err)
		e.restart()
		is.True(e.Running(a))  // a was running: started again
		is.True(!e.Running(b)) // b was stopped: stays stopped
	})
}

// set returns a patch field that sets v.
func set[T any](v T) hub.Optional[T] { return hub.Optional[T]{Set: true, Value: &v} }

// wait receives from ch or fails the test after a bound.
func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
		panic("unreachable")
	}
}
