package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestConfigure(t *testing.T) {
	t.Run("stopped by default, started when asked", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		res, err := e.Configure(e.ctx, hub.ConfigureRequest{Path: e.repo("/home/ann/a"), DisplayName: " Alpha "})
		is.NoErr(err)
		is.Equal(res.Workspace.DisplayName, "Alpha")    // trimmed display name committed
		is.True(!res.Started && !res.Workspace.Running) // start defaults to false
		is.Equal(res.StartError, "")                    // no start, no error
		res, err = e.Configure(e.ctx, hub.ConfigureRequest{Path: e.repo("/home/ann/b"), DisplayName: "Beta", Start: true})
		is.NoErr(err)
		is.True(res.Started && res.Workspace.Running) // started as asked
	})
	t.Run("a failed requested start keeps the stopped workspace", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.backend.FailNextStart(hub.Errorf(hub.Internal, "session did not become ready within 10s"))
		res, err := e.Configure(e.ctx, hub.ConfigureRequest{Path: e.repo("/home/ann/a"), DisplayName: "A", Start: true})
		is.NoErr(err)                                                                         // still a success
		is.True(!res.Started)                                                                 // not started
		is.True(strings.HasSuffix(res.StartError, "session did not become ready within 10s")) // says why
		is.Equal(e.pathOf(res.Workspace.ID), "/home/ann/a")                                   // registered
	})
	t.Run("refusals leave nothing registered", func(t *testing.T) {
		e := newEnv(t)
		e.repo("/home/ann/taken")
		e.register("/home/ann/taken")
		e.dir("/home/ann/plain")
		for _, tc := range []struct {
			name string
			req  hub.ConfigureRequest
			kind hub.Kind
			msg  string
		}{
			{"already registered", hub.ConfigureRequest{Path: "/home/ann/taken", DisplayName: "x"}, hub.Conflict, "folder is already registered as workspace taken"},
			{"needs init", hub.ConfigureRequest{Path: "/home/ann/plain", DisplayName: "x"}, hub.Conflict, "/home/ann/plain is not a git repository"},
			{"unknown authentication credential", hub.ConfigureRequest{Path: "/home/ann/plain", DisplayName: "x", Init: true,
				Authentication: []hub.AuthenticationSelection{{CredentialID: "c1", Host: "github.com"}}}, hub.Conflict, "unknown credential: c1"},
			{"unknown signing credential", hub.ConfigureRequest{Path: "/home/ann/plain", DisplayName: "x", Init: true, Signing: "c2"}, hub.Conflict, "unknown credential: c2"},
			{"selection without host", hub.ConfigureRequest{Path: "/home/ann/plain", DisplayName: "x",
				Authentication: []hub.AuthenticationSelection{{CredentialID: "c1"}}}, hub.Invalid, "host is required for role authentication"},
			{"display name too long", hub.ConfigureRequest{Path: "/home/ann/plain", DisplayName: strings.Repeat("n", 65)}, hub.Invalid, "workspace display name must be at most 64 characters"},
			{"missing folder", hub.ConfigureRequest{Path: "/home/ann/nope", DisplayName: "x"}, hub.NotFound, "folder was not found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := e.Configure(e.ctx, tc.req)
				is.Equal(hub.KindOf(err), tc.kind)        // status
				is.Equal(hub.MessageOf(err), tc.msg)      // message
				is.Equal(len(e.workspaces()), 1)          // only the earlier registration
				is.True(!e.isDir("/home/ann/plain/.git")) // not initialized
			})
		}
	})
}

func TestCreateConfigured(t *testing.T) {
	t.Run("creates, initializes and registers", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/src")
		res, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: " new app ", DisplayName: "New"})
		is.NoErr(err)
		is.Equal(res.Workspace.Path, "/home/ann/src/ new app ") // spaces in the folder name are kept
		is.Equal(res.Workspace.ID, "new-app")                   // id from the folder name
		is.True(e.isDir("/home/ann/src/ new app /.git"))        // initialized
		is.True(!res.Workspace.Running)                         // stopped by default
		dup, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "other", DisplayName: "New"})
		is.NoErr(err)                              // display names need not be unique
		is.Equal(dup.Workspace.DisplayName, "New") // same name
	})
	t.Run("never replaces anything", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/src/exists")
		e.fs.WriteFile("/home/ann/src/exists/keep")
		_, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "exists", DisplayName: "x"})
		is.Equal(hub.KindOf(err), hub.Conflict)                    // 409
		is.Equal(hub.MessageOf(err), "destination already exists") // the contract's text
		is.True(!e.isDir("/home/ann/src/exists/.git"))             // untouched
		is.Equal(len(e.workspaces()), 0)                           // nothing registered
	})
	t.Run("a failed git init removes the empty folder", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/src")
		e.git.FailNext("init", errors.New("git missing"))
		_, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "x", DisplayName: "x"})
		is.Equal(hub.KindOf(err), hub.Internal)         // 500
		is.Equal(hub.MessageOf(err), "git init failed") // says what failed, not git's output
		is.True(!e.isDir("/home/ann/src/x"))            // nothing left behind
		is.Equal(len(e.journals()), 0)                  // no journal pending
	})
	t.Run("a failed registration keeps the repository and names it", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/src")
		failCommit(e, 2) // the journal commits; the registration does not
		_, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "x", DisplayName: "x"})
		is.Equal(hub.KindOf(err), hub.Internal)                   // 500
		is.Equal(errDetails(err).RetainedPath, "/home/ann/src/x") // the kept repository
		is.True(e.isDir("/home/ann/src/x/.git"))                  // is still there
		is.Equal(len(e.workspaces()), 0)                          // nothing registered
		res, err := e.Configure(e.ctx, hub.ConfigureRequest{Path: "/home/ann/src/x", DisplayName: "x"})
		is.NoErr(err)                                   // a retry through configure succeeds
		is.Equal(res.Workspace.Path, "/home/ann/src/x") // at the kept path
	})
	t.Run("bad input", func(t *testing.T) {
		e := newEnv(t)
		e.dir("/home/ann/src")
		e.fs.Symlink("/home/ann/src", "/home/ann/link")
		for _, tc := range []struct {
			name string
			req  hub.CreateConfiguredRequest
			kind hub.Kind
			msg  string
		}{
			{"relative parent", hub.CreateConfiguredRequest{Parent: "src", FolderName: "x", DisplayName: "x"}, hub.Invalid, "parent must be an absolute path"},
			{"hidden name", hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: ".x", DisplayName: "x"}, hub.Invalid, "folderName must be one visible non-hidden path segment"},
			{"dot dot", hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "..", DisplayName: "x"}, hub.Invalid, "folderName must be one visible non-hidden path segment"},
			{"blank display name", hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "x", DisplayName: " "}, hub.Invalid, "workspace display name must not be empty"},
			{"missing parent", hub.CreateConfiguredRequest{Parent: "/home/ann/nope", FolderName: "x", DisplayName: "x"}, hub.NotFound, "folder was not found"},
			{"symlinked parent", hub.CreateConfiguredRequest{Parent: "/home/ann/link", FolderName: "x", DisplayName: "x"}, hub.Invalid, "parent must name a direct non-symbolic-link directory"},
			{"credential", hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "x", DisplayName: "x", Signing: "k"}, hub.Conflict, "unknown credential: k"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := e.CreateConfigured(e.ctx, tc.req)
				is.Equal(hub.KindOf(err), tc.kind)   // status
				is.Equal(hub.MessageOf(err), tc.msg) // message
				entries, _ := e.fs.ReadDir("/home/ann/src")
				is.Equal(len(entries), 0)        // no folder created
				is.Equal(len(e.workspaces()), 0) // nothing registered
			})
		}
	})
}

func TestRecoveryRequired(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.repo("/home/ann/a")
	failCommit(e, 3) // journal and registration commit; clearing the journal does not
	act, err := e.Register(e.ctx, hub.RegisterRequest{Path: p, Start: true})
	is.NoErr(err)                                                                   // 200, not an error
	is.True(strings.Contains(act.RecoveryRequired, "journal could not be cleared")) // says recovery is required
	is.True(!act.Running)                                                           // stopped
	is.Equal(e.backend.StartCount(act.ID), 0)                                       // no start was attempted
	is.Equal(len(e.journals()), 1)                                                  // the journal is still pending

	// The pending journal fences the operations the contract names.
	_, err = e.StartWorkspace(e.ctx, act.ID)
	is.Equal(hub.MessageOf(err), "a pending onboarding requires Hub recovery before session starts") // start
	_, err = e.SetDisplayName(e.ctx, act.ID, "x")
	is.Equal(hub.KindOf(err), hub.Conflict) // display name
	_, err = e.RenameFolder(e.ctx, "", p, "b", false)
	is.Equal(hub.MessageOf(err), "a pending recovery journal requires Hub recovery before further folder changes") // rename
	_, err = e.Configure(e.ctx, hub.ConfigureRequest{Path: e.repo("/home/ann/c"), DisplayName: "c"})
	is.Equal(hub.KindOf(err), hub.Conflict) // new registrations
	_, err = e.ForgetWorkspace(e.ctx, act.ID)
	is.Equal(hub.KindOf(err), hub.Conflict) // forget

	e.restart()
	is.Equal(len(e.journals()), 0) // recovery settled the journal
	is.Equal(e.pathOf(act.ID), p)  // the committed registration stands
	e.start(act.ID)                // and starts now
}

// failCommit makes the n-th store commit from now fail, as a full disk
// would.
func failCommit(e *env, n int) {
	count := 0
	e.store.BeforeCommit = func() error {
		if count++; count == n {
			return errors.New("disk full")
		}
		return nil
	}
}
