package service_test

import (
	"context"
	"path"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

// These fuzz targets run under `go test` on their seeds and under
// `go test -fuzz` (.ci/fuzz) on generated input. Each states what must
// hold for every input, not just for the inputs someone thought of.

// fuzzHub is a Hub over fakes with ann's home and one source folder, made
// once per fuzz target: fuzzing calls the function thousands of times.
func fuzzHub(f *testing.F) (*service.Hub, *fakes.FS) {
	fsys := fakes.NewFS("/home/ann")
	fsys.MkdirAll("/home/ann/src/app")
	h, err := service.New(service.Config{Password: cheap}, service.Ports{Store: fakes.NewStore(),
		Clock: fakes.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)), FS: fsys, Git: fakes.NewGit(fsys),
		Backend: fakes.NewBackend(), Vault: fakes.NewKeyVault(hub.SystemClock{}), Tools: fakes.NewToolProber(), AgentLogins: fakes.NewAgentLogins(), Pusher: fakes.NewPusher()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close() })
	return h, fsys
}

// Folder names and paths: a name the Hub accepts makes exactly one new
// folder directly under the parent (never elsewhere, never escaping it),
// and anything it refuses is bad input or a conflict, never an internal
// error.
func FuzzFolderChanges(f *testing.F) {
	for _, seed := range []struct{ parent, name string }{
		{"/home/ann/src", "new"}, {"/home/ann/src", ".."}, {"/home/ann/src", "a/b"}, {"/home/ann/src/", "x"},
		{"/home/ann/src/../../etc", "x"}, {"relative", "x"}, {"/home/ann/src", "a\u202eb"}, {"/home/ann/src", " pad "},
		{"/home/ann/src", strings.Repeat("n", 256)}, {"/home/ann/src\x00", "x"}, {"/", "x"}, {"/home/ann/src", "app"},
	} {
		f.Add(seed.parent, seed.name)
	}
	h, fsys := fuzzHub(f)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, parent, name string) {
		p, err := h.CreateFolder(ctx, "", parent, name)
		if err != nil {
			switch hub.KindOf(err) {
			case hub.Invalid, hub.NotFound, hub.Conflict, hub.Forbidden:
			default:
				t.Fatalf("CreateFolder(%q, %q): %v, want bad input or a conflict", parent, name, err)
			}
			return
		}
		if path.Dir(p) != path.Clean(parent) || path.Base(p) != name || !utf8.ValidString(name) ||
			strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
			t.Fatalf("CreateFolder(%q, %q) made %q", parent, name, p)
		}
		if _, err := h.RenameFolder(ctx, "", p, name+"-renamed", false); err == nil {
			if fi, err := fsys.Lstat(path.Join(path.Dir(p), name+"-renamed")); err != nil || !fi.IsDir() {
				t.Fatalf("rename of %q did not stay in its parent", p)
			}
			p = path.Join(path.Dir(p), name+"-renamed")
		}
		if _, err := h.RemoveFolder(ctx, "", p, false); err != nil {
			t.Fatalf("the folder %q just made cannot be removed: %v", p, err)
		}
	})
}
