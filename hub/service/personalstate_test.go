package service_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestPersonalState(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.register(e.repo("/home/ann/a"))
	bob := e.user("bob")

	st, err := e.PersonalState(e.ctx, e.ann, id)
	is.NoErr(err)                     // readable while stopped
	is.Equal(st, hub.PersonalState{}) // empty at first

	st, err = e.PatchPersonalState(e.ctx, e.ann, id, hub.PersonalStatePatch{
		DocumentPath: set("docs/readme.md"), Follow: set(true), PreviewMode: set("diff")})
	is.NoErr(err)
	is.Equal(*st.DocumentPath, "docs/readme.md") // set
	st, err = e.PatchPersonalState(e.ctx, e.ann, id, hub.PersonalStatePatch{
		Follow: hub.Optional[bool]{Set: true}, FilesFilter: set("changed")})
	is.NoErr(err)
	is.True(st.Follow == nil)                    // null clears
	is.Equal(*st.DocumentPath, "docs/readme.md") // absent is unchanged
	is.Equal(*st.FilesFilter, "changed")         // another field set

	other, err := e.PersonalState(e.ctx, bob, id)
	is.NoErr(err)
	is.Equal(other, hub.PersonalState{}) // per user

	_, err = e.PersonalState(e.ctx, e.ann, "nope")
	is.Equal(hub.KindOf(err), hub.NotFound)                 // unknown workspace
	is.Equal(hub.MessageOf(err), "unknown workspace: nope") // message
}

func TestPersonalStatePatchValidation(t *testing.T) {
	e := newEnv(t)
	id := e.register(e.repo("/home/ann/a"))
	for _, tc := range []struct {
		name  string
		patch hub.PersonalStatePatch
		msg   string
	}{
		{"absolute documentPath", hub.PersonalStatePatch{DocumentPath: set("/etc/passwd")}, "documentPath must be a normalized relative path"},
		{"dot dot documentPath", hub.PersonalStatePatch{DocumentPath: set("a/../b")}, "documentPath must be a normalized relative path"},
		{"dot documentPath", hub.PersonalStatePatch{DocumentPath: set("./a")}, "documentPath must be a normalized relative path"},
		{"empty segment", hub.PersonalStatePatch{DocumentPath: set("a//b")}, "documentPath must be a normalized relative path"},
		{"backslash", hub.PersonalStatePatch{DocumentPath: set(`a\b`)}, "documentPath must be a normalized relative path"},
		{"drive letter", hub.PersonalStatePatch{DocumentPath: set("C:x")}, "documentPath must be a normalized relative path"},
		{"empty", hub.PersonalStatePatch{DocumentPath: set("")}, "documentPath must be a normalized relative path"},
		{"previewMode", hub.PersonalStatePatch{PreviewMode: set("raw")}, "invalid previewMode"},
		{"compareTarget", hub.PersonalStatePatch{CompareTarget: set("head")}, "invalid compareTarget"},
		{"filesFilter", hub.PersonalStatePatch{FilesFilter: set("some")}, "invalid filesFilter"},
		{"upper-case uuid", hub.PersonalStatePatch{LastPtyID: set("6F9619FF-8B86-D011-B42D-00C04FC964FF")}, "lastPtyId must be a UUID or null"},
		{"not a uuid", hub.PersonalStatePatch{LastPtyID: set("pty-1")}, "lastPtyId must be a UUID or null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.PatchPersonalState(e.ctx, e.ann, id, tc.patch)
			is.Equal(hub.KindOf(err), hub.Invalid) // 400
			is.Equal(hub.MessageOf(err), tc.msg)   // message
			st, err := e.PersonalState(e.ctx, e.ann, id)
			is.NoErr(err)
			is.Equal(st, hub.PersonalState{}) // nothing written
		})
	}
}

func TestAcknowledgeActivity(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	id := e.register(e.repo("/home/ann/a"))
	is.NoErr(e.AcknowledgeActivity(e.ctx, e.ann, id)) // answered
	var marks []hub.ActivityMark
	is.NoErr(e.store.View(e.ctx, func(tx hub.Tx) error {
		var err error
		marks, err = tx.ActivityMarks()
		return err
	}))
	is.Equal(len(marks), 0) // with nothing unseen, nothing is recorded
	err := e.AcknowledgeActivity(e.ctx, e.ann, "nope")
	is.Equal(hub.KindOf(err), hub.NotFound)                 // unknown workspace
	is.Equal(hub.MessageOf(err), "unknown workspace: nope") // says so
}

func TestWorkspaceDefaults(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	d, err := e.WorkspaceDefaults(e.ctx)
	is.NoErr(err)
	is.Equal(d, hub.WorkspaceDefaults{Effective: home}) // none configured: home

	e.dir("/srv/code")
	e.fs.Symlink("/srv", "/home/ann/srv")
	d, err = e.SetDefaultParent(e.ctx, ptr("/home/ann/srv/code/../code"))
	is.NoErr(err)
	is.Equal(d, hub.WorkspaceDefaults{Configured: "/srv/code", ConfiguredAvailable: true, Effective: "/srv/code"}) // canonical
	res, err := e.Browse(e.ctx, "", "")
	is.NoErr(err)
	is.Equal(res.Path, "/srv/code") // pathless browse uses it

	for _, tc := range []struct{ name, in, msg string }{
		{"relative", "srv", "default workspace parent must be an absolute path"},
		{"missing", "/nope", "default workspace parent was not found"},
		{"symlink", "/home/ann/srv", "default workspace parent must be a direct non-symbolic-link directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.SetDefaultParent(e.ctx, ptr(tc.in))
			is.Equal(hub.KindOf(err), hub.Invalid) // 400
			is.Equal(hub.MessageOf(err), tc.msg)   // message
			d, _ := e.WorkspaceDefaults(e.ctx)
			is.Equal(d.Configured, "/srv/code") // unchanged
		})
	}

	e.fs.RemoveEmpty("/srv/code")
	d, err = e.WorkspaceDefaults(e.ctx)
	is.NoErr(err)
	is.Equal(d, hub.WorkspaceDefaults{Configured: "/srv/code", Effective: home}) // kept, unavailable, falls back

	d, err = e.SetDefaultParent(e.ctx, nil)
	is.NoErr(err)
	is.Equal(d, hub.WorkspaceDefaults{Effective: home}) // cleared
}

func TestBrowse(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	e.repo("/home/ann/beta")
	e.dir("/home/ann/Alpha")
	e.dir("/home/ann/.hidden")
	e.dir("/home/ann/ padded ")
	e.fs.WriteFile("/home/ann/file")
	e.fs.Symlink("/home/ann/beta", "/home/ann/link")
	id := e.register("/home/ann/beta")
	_, err := e.SetDisplayName(e.ctx, id, "Beta site")
	is.NoErr(err)
	e.start(id)

	res, err := e.Browse(e.ctx, "", "")
	is.NoErr(err)
	is.Equal(res.Path, home)               // defaults to home
	is.Equal(res.Parent, "/home")          // its parent
	is.Equal(len(res.Dirs), 3)             // directories only: no hidden entry, file or link
	is.Equal(res.Dirs[0].Name, " padded ") // significant spaces kept; sorted case-insensitively
	is.Equal(res.Dirs[1].Name, "Alpha")
	is.Equal(res.Dirs[2], hub.BrowseEntry{Name: "beta", Git: true, RegisteredID: id, DisplayName: "Beta site", Running: true}) // registered entry
	is.Equal(res.Dirs[1].RegisteredID, "")                                                                                     // unregistered

	root, err := e.Browse(e.ctx, "", "/")
	is.NoErr(err)
	is.Equal(root.Parent, "") // none at the root

	for _, tc := range []struct {
		name, in string
		kind     hub.Kind
		msg      string
	}{
		{"relative", "home", hub.Invalid, "path must be absolute"},
		{"missing", "/home/ann/nope", hub.NotFound, "cannot read directory: /home/ann/nope"},
		{"file", "/home/ann/file", hub.NotFound, "cannot read directory: /home/ann/file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.Browse(e.ctx, "", tc.in)
			is.Equal(hub.KindOf(err), tc.kind)   // status
			is.Equal(hub.MessageOf(err), tc.msg) // message
		})
	}
}

func ptr[T any](v T) *T { return &v }
