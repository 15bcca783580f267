package service_test

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestCreateFolder(t *testing.T) {
	e := newEnv(t)
	e.dir("/home/ann/src/exists")
	e.fs.WriteFile("/home/ann/file")
	e.fs.Symlink("/home/ann/src", "/home/ann/link")
	gone := e.register(e.repo("/home/ann/src/gone"))
	e.fs.RemoveEmpty("/home/ann/src/gone/.git")
	e.fs.RemoveEmpty("/home/ann/src/gone") // a registered folder that vanished
	for _, tc := range []struct {
		name, parent, folder string
		kind                 hub.Kind
		msg                  string
	}{
		{"relative parent", "home/ann", "x", hub.Invalid, "parent must be an absolute path"},
		{"missing parent", "/home/ann/nope", "x", hub.NotFound, "folder was not found"},
		{"file parent", "/home/ann/file", "x", hub.Invalid, "parent is not a directory"},
		{"symlinked parent", "/home/ann/link", "x", hub.Invalid, "parent must name a direct non-symbolic-link directory"},
		{"existing", "/home/ann/src", "exists", hub.Conflict, "destination already exists"},
		{"claimed by a registration", "/home/ann/src", "gone", hub.Conflict, "destination is claimed by a registered workspace"},
		{"name of 256 bytes", "/home/ann/src", strings.Repeat("n", 256), hub.Invalid, "name is longer than 255 bytes"},
		{"parent segment of 256 bytes", "/home/ann/" + strings.Repeat("p", 256), "x", hub.Invalid, "a path segment is longer than 255 bytes"},
		{"parent of 4096 bytes", "/" + strings.Repeat(strings.Repeat("p", 200)+"/", 20) + strings.Repeat("p", 95), "x", hub.Invalid, "path is longer than 4095 bytes"},
		{"result over 4095 bytes", "/" + strings.Repeat(strings.Repeat("p", 200)+"/", 19) + strings.Repeat("p", 250), strings.Repeat("x", 30), hub.Invalid, "path is longer than 4095 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.CreateFolder(e.ctx, "", tc.parent, tc.folder)
			is.Equal(hub.KindOf(err), tc.kind)   // status
			is.Equal(hub.MessageOf(err), tc.msg) // message
		})
	}
	t.Run("permission", func(t *testing.T) {
		is := is.New(t)
		e.failOn("mkdir", "/home/ann/src/new", &fs.PathError{Op: "mkdir", Path: "/home/ann/src/new", Err: fs.ErrPermission})
		_, err := e.CreateFolder(e.ctx, "", "/home/ann/src", "new")
		is.Equal(hub.KindOf(err), hub.Forbidden)                     // 403
		is.Equal(hub.MessageOf(err), "filesystem permission denied") // no host detail
	})
	is := is.New(t)
	is.Equal(e.pathOf(gone), "/home/ann/src/gone") // the vanished registration is kept
}

func TestRenameFolder(t *testing.T) {
	t.Run("unregistered", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/a/inner")
		res, err := e.RenameFolder(e.ctx, "", "/home/ann/a", "b", false)
		is.NoErr(err)
		is.Equal(res.Path, "/home/ann/b")     // new path
		is.Equal(len(res.WorkspaceIDs), 0)    // no workspace followed
		is.True(e.isDir("/home/ann/b/inner")) // content moved
		is.True(!e.isDir("/home/ann/a"))      // source gone
	})
	t.Run("registered folders follow, ids and state stay", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		top := e.register(e.repo("/home/ann/group/top"))
		e.dir("/home/ann/group")
		inner := e.register(e.repo("/home/ann/group/top/sub"))
		other := e.register(e.repo("/home/ann/group-two"))
		_, err := e.PatchPersonalState(e.ctx, e.ann, inner, hub.PersonalStatePatch{Follow: set(true)})
		is.NoErr(err)
		res, err := e.RenameFolder(e.ctx, "", "/home/ann/group", "team", false)
		is.NoErr(err)
		is.Equal(res.WorkspaceIDs, []string{top, inner})    // both followed, in registration order
		is.Equal(e.pathOf(top), "/home/ann/team/top")       // paths updated
		is.Equal(e.pathOf(inner), "/home/ann/team/top/sub") // descendants too
		is.Equal(e.pathOf(other), "/home/ann/group-two")    // a prefix sibling is not below
		st, err := e.PersonalState(e.ctx, e.ann, inner)
		is.NoErr(err)
		is.True(st.Follow != nil && *st.Follow) // personal state followed the id
		is.Equal(len(e.journals()), 0)          // journal cleared
	})
	t.Run("running sessions need stop authorization", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		b := e.register(e.repo("/home/ann/g/b"))
		a := e.register(e.repo("/home/ann/g/a"))
		e.start(b)
		e.start(a)
		_, err := e.RenameFolder(e.ctx, "", "/home/ann/g", "h", false)
		is.Equal(hub.KindOf(err), hub.Conflict)                                     // 409
		is.Equal(hub.MessageOf(err), "affected workspace sessions must be stopped") // the contract's text
		is.True(errDetails(err).StopConflict)                                       // needsStop
		is.Equal(errDetails(err).WorkspaceIDs, []string{"a", "b"})                  // sorted ids
		is.True(e.isDir("/home/ann/g"))                                             // nothing moved
		is.True(e.Running(a) && e.Running(b))                                       // nothing stopped
		res, err := e.RenameFolder(e.ctx, "", "/home/ann/g", "h", true)
		is.NoErr(err)                              // authorized
		is.Equal(res.WorkspaceIDs, []string{b, a}) // registry order
		is.True(!e.Running(a) && !e.Running(b))    // both stopped
		is.Equal(e.pathOf(a), "/home/ann/h/a")     // and moved
	})
	t.Run("bad input", func(t *testing.T) {
		e := newEnv(t)
		e.dir("/home/ann/a")
		e.dir("/home/ann/b")
		e.fs.Symlink("/home/ann/a", "/home/ann/link")
		for _, tc := range []struct {
			name, path, to string
			kind           hub.Kind
			msg            string
		}{
			{"relative", "home/ann/a", "c", hub.Invalid, "path must be an absolute path"},
			{"bad name", "/home/ann/a", "c/d", hub.Invalid, "name must be one visible non-hidden path segment"},
			{"hidden name", "/home/ann/a", ".c", hub.Invalid, "name must be one visible non-hidden path segment"},
			{"missing", "/home/ann/nope", "c", hub.NotFound, "folder was not found"},
			{"symlink", "/home/ann/link", "c", hub.Invalid, "folder path must name a direct non-symbolic-link directory"},
			{"onto existing", "/home/ann/a", "b", hub.Conflict, "destination already exists"},
			{"same name", "/home/ann/a", "a", hub.Conflict, "source and destination are the same folder"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				is := is.New(t)
				_, err := e.RenameFolder(e.ctx, "", tc.path, tc.to, false)
				is.Equal(hub.KindOf(err), tc.kind)                        // status
				is.Equal(hub.MessageOf(err), tc.msg)                      // message
				is.True(e.isDir("/home/ann/a") && e.isDir("/home/ann/b")) // nothing moved
			})
		}
	})
	t.Run("a failed registry update puts the folder back", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.register(e.repo("/home/ann/a"))
		failCommit(e, 2) // the journal commits; the registry update does not
		_, err := e.RenameFolder(e.ctx, "", "/home/ann/a", "b", false)
		is.Equal(hub.KindOf(err), hub.Internal)                    // 500
		is.True(e.isDir("/home/ann/a") && !e.isDir("/home/ann/b")) // folder back in place
		is.Equal(e.pathOf(id), "/home/ann/a")                      // registry unchanged
		is.Equal(len(e.journals()), 0)                             // journal cleared
		_, err = e.RenameFolder(e.ctx, "", "/home/ann/a", "b", false)
		is.NoErr(err) // a failed mutation does not block later ones
	})
	t.Run("a folder under change is reserved", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/src")
		entered, release := make(chan struct{}), make(chan struct{})
		e.fs.Before = func(op, p string) error {
			if op == "mkdir" && p == "/home/ann/src/new" {
				close(entered)
				<-release
			}
			return nil
		}
		done := make(chan error, 1)
		go func() {
			_, err := e.CreateConfigured(e.ctx, hub.CreateConfiguredRequest{Parent: "/home/ann/src", FolderName: "new", DisplayName: "n"})
			done <- err
		}()
		wait(t, entered)
		_, err := e.RenameFolder(e.ctx, "", "/home/ann/src", "code", false)
		is.Equal(hub.KindOf(err), hub.Conflict)                                      // an ancestor of the reserved folder
		is.Equal(hub.MessageOf(err), "folder path is reserved by another operation") // the contract's text
		close(release)
		is.NoErr(wait(t, done)) // the creation completes
	})
}

func TestRemoveFolder(t *testing.T) {
	t.Run("unregistered empty folder", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/a")
		res, err := e.RemoveFolder(e.ctx, "", "/home/ann/a", false)
		is.NoErr(err)
		is.Equal(res, hub.RemoveResult{Path: "/home/ann/a"}) // no workspace
		is.True(!e.isDir("/home/ann/a"))                     // removed
	})
	t.Run("never removes content", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.dir("/home/ann/a")
		e.fs.WriteFile("/home/ann/a/.hidden")
		_, err := e.RemoveFolder(e.ctx, "", "/home/ann/a", true)
		is.Equal(hub.KindOf(err), hub.Conflict)             // 409
		is.Equal(hub.MessageOf(err), "folder is not empty") // a lone hidden file counts
		is.True(e.isDir("/home/ann/a"))                     // kept
	})
	t.Run("a registered folder is forgotten with it", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.registerEmpty("/home/ann/a")
		e.start(id)
		_, err := e.PatchPersonalState(e.ctx, e.ann, id, hub.PersonalStatePatch{Follow: set(true)})
		is.NoErr(err)
		_, err = e.RemoveFolder(e.ctx, "", "/home/ann/a", false)
		is.True(errDetails(err).StopConflict)                // running: needs stop
		is.Equal(errDetails(err).WorkspaceIDs, []string{id}) // names it
		res, err := e.RemoveFolder(e.ctx, "", "/home/ann/a", true)
		is.NoErr(err)
		is.Equal(res.WorkspaceID, id)    // the forgotten workspace
		is.True(!e.Running(id))          // stopped first
		is.Equal(e.pathOf(id), "")       // unregistered
		is.True(!e.isDir("/home/ann/a")) // removed
		_, err = e.PersonalState(e.ctx, e.ann, id)
		is.Equal(hub.KindOf(err), hub.NotFound) // its personal state went with it
		is.Equal(len(e.journals()), 0)          // journal cleared
	})
	t.Run("only an exact registration counts", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		e.registerEmpty("/home/ann/a")
		e.dir("/home/ann/b")
		res, err := e.RemoveFolder(e.ctx, "", "/home/ann/b", false)
		is.NoErr(err)
		is.Equal(res.WorkspaceID, "") // a sibling is not the registration
	})
	t.Run("a failed registry update leaves the journal for recovery", func(t *testing.T) {
		is := is.New(t)
		e := newEnv(t)
		id := e.registerEmpty("/home/ann/a")
		failCommit(e, 2)
		_, err := e.RemoveFolder(e.ctx, "", "/home/ann/a", false)
		is.Equal(hub.KindOf(err), hub.Internal)                                     // 500
		is.Equal(hub.MessageOf(err), "registered folder removal requires recovery") // says so
		_, err = e.CreateFolder(e.ctx, "", home, "x")
		is.Equal(hub.MessageOf(err), "a pending recovery journal requires Hub recovery before further folder changes") // fenced
		_, err = e.StartWorkspace(e.ctx, id)
		is.Equal(hub.MessageOf(err), "a pending recovery journal requires Hub recovery before further folder changes") // start fenced
		e.restart()
		is.Equal(e.pathOf(id), "")     // recovery finished the forget
		is.Equal(len(e.journals()), 0) // and cleared the journal
		_, err = e.CreateFolder(e.ctx, "", home, "x")
		is.NoErr(err) // no longer fenced
	})
}

// registerEmpty registers an empty folder: a repository whose .git is then
// removed, so the folder can be removed.
func (e *env) registerEmpty(p string) string {
	e.t.Helper()
	id := e.register(e.repo(p))
	if err := e.fs.RemoveEmpty(p + "/.git"); err != nil {
		e.t.Fatal(err)
	}
	return id
}
