package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"
)

// tree makes a workspace beside an outside folder, as a cloned repository
// sits beside a home folder, with every kind of link a repository (or an
// earlier process) can leave.
func tree(t testing.TB) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{ws, outside, filepath.Join(ws, "docs"), filepath.Join(ws, "documentation")} {
		must(os.Mkdir(d, 0o755))
	}
	must(os.WriteFile(filepath.Join(outside, "secret"), []byte("outside secret"), 0o600))
	must(os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello"), 0o640))
	must(os.WriteFile(filepath.Join(ws, "documentation", "guide.md"), []byte("guide"), 0o644))
	must(os.WriteFile(filepath.Join(ws, "big"), make([]byte, 2048), 0o644))
	for link, target := range map[string]string{
		"docs/todo.md": "../../outside/x",                  // dangling, out: git stores these
		"out":          "../outside",                       // a folder out
		"out2":         "../outside/missing",               // a dangling folder out
		"secretlink":   "../outside/secret",                // a file out
		"inner":        "a.txt",                            // a file inside, as the last part
		"docs2":        "documentation",                    // a folder inside
		"abs":          filepath.Join(ws, "documentation"), // absolute, though inside
		"up":           "..",
		"loop1":        "loop2",
		"loop2":        "loop1",
	} {
		must(os.Symlink(target, filepath.Join(ws, link)))
	}
	must(os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "hard")))
	must(syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o600))
	return ws, outside
}

// rootWith is the boundary of ws resolving with res.
func rootWith(ws string, res resolver) *Root {
	r := New(ws)
	r.resolve = res
	return r
}

func TestReadsStayInsideTheWorkspace(t *testing.T) {
	for name, res := range resolversUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			ws, _ := tree(t)
			r := rootWith(ws, res)
			for _, tc := range []struct {
				rel  string
				want string
				err  error
			}{
				{"a.txt", "hello", nil},
				{"docs2/guide.md", "guide", nil},      // through a folder link inside
				{"docs/../a.txt", "hello", nil},       // `..` that stays inside
				{"docs/todo.md", "", ErrSymlink},      // a dangling link out, last
				{"secretlink", "", ErrSymlink},        // a link to an outside file
				{"inner", "", ErrSymlink},             // any last link
				{"out/secret", "", ErrOutside},        // through a folder link out
				{"abs/guide.md", "", ErrOutside},      // through an absolute link
				{"up/outside/secret", "", ErrOutside}, // a link to `..`
				{"../outside/secret", "", ErrOutside}, // `..` out
				{"hard", "", ErrHardLink},             // a hard link to an outside file
				{"pipe", "", ErrNotRegular},           // a FIFO, which would block
				{".", "", ErrNotRegular},              // a folder
				{"big", "", ErrTooLarge},              // over the limit
				{"missing", "", fs.ErrNotExist},       // nothing there
				{"a.txt/x", "", ErrNotDir},            // a file as a folder
				{"loop1/x", "", ErrSymlink},           // links in a loop
			} {
				t.Run(strings.ReplaceAll(tc.rel, "/", "_"), func(t *testing.T) {
					is := is.New(t)
					got, err := r.ReadFile(tc.rel, 1024)
					if tc.err != nil {
						is.True(errors.Is(err, tc.err)) // refused as it should be
						var pe *fs.PathError
						is.True(errors.As(err, &pe))               // a path error
						is.True(!strings.Contains(pe.Error(), ws)) // naming no host path
						return
					}
					is.NoErr(err)                  // read
					is.Equal(string(got), tc.want) // the file inside
				})
			}
		})
	}
}

func TestWritesStayInsideTheWorkspace(t *testing.T) {
	for name, res := range resolversUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			ws, outside := tree(t)
			r := rootWith(ws, res)
			for _, tc := range []struct {
				rel string
				err error
			}{
				{"docs/todo.md", ErrSymlink},  // the dangling link out: never followed
				{"secretlink", ErrSymlink},    // a link to an outside file
				{"inner", ErrSymlink},         // a link inside, last
				{"out/x", ErrOutside},         // through a folder link out
				{"out2/deeper/x", ErrOutside}, // through a dangling folder link out, making folders
				{"abs/x", ErrOutside},         // through an absolute link
				{"../outside/x", ErrOutside},  // `..` out
				{"hard", ErrHardLink},         // a hard link to an outside file
				{"pipe", ErrNotRegular},       // a FIFO
				{"docs", ErrNotRegular},       // a folder
				{"a.txt/x", ErrNotDir},        // a file as a folder
				{"a.txt", nil},                // an existing file
				{"new/deep/file.txt", nil},    // a new file in new folders
				{"docs2/new.md", nil},         // through a folder link inside
			} {
				t.Run(strings.ReplaceAll(tc.rel, "/", "_"), func(t *testing.T) {
					is := is.New(t)
					err := r.WriteFile(tc.rel, []byte("agent text"))
					if tc.err != nil {
						is.True(errors.Is(err, tc.err)) // refused as it should be
						return
					}
					is.NoErr(err) // written
					got, err := r.ReadFile(tc.rel, 1024)
					is.NoErr(err)
					is.Equal(string(got), "agent text") // the new content
				})
			}
			is := is.New(t)
			entries, err := os.ReadDir(outside)
			is.NoErr(err)
			is.Equal(len(entries), 1) // nothing made outside
			b, err := os.ReadFile(filepath.Join(outside, "secret"))
			is.NoErr(err)
			is.Equal(string(b), "outside secret") // nor changed
			target, err := os.Readlink(filepath.Join(ws, "docs", "todo.md"))
			is.NoErr(err)
			is.Equal(target, "../../outside/x") // the link is left as it was
			fi, err := os.Stat(filepath.Join(ws, "a.txt"))
			is.NoErr(err)
			is.Equal(fi.Mode().Perm(), os.FileMode(0o640)) // a replaced file keeps its mode
			_, err = os.Stat(filepath.Join(ws, "documentation", "new.md"))
			is.NoErr(err) // written where the inside link leads
			leftovers, err := filepath.Glob(filepath.Join(ws, "*", ".wharf-*"))
			is.NoErr(err)
			is.Equal(len(leftovers), 0) // no temporary file left behind
		})
	}
}

func TestFoldersStayInsideTheWorkspace(t *testing.T) {
	for name, res := range resolversUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			ws, _ := tree(t)
			r := rootWith(ws, res)
			for _, tc := range []struct {
				rel string
				err error
			}{
				{".", nil},
				{"docs", nil},
				{"docs2", nil},       // a folder link inside is a working folder
				{"out", ErrOutside},  // one out is not
				{"abs", ErrOutside},  // nor an absolute one
				{"a.txt", ErrNotDir}, // a file is no folder
				{"missing", fs.ErrNotExist},
			} {
				t.Run(tc.rel, func(t *testing.T) {
					is := is.New(t)
					d, err := r.OpenDir(tc.rel)
					if tc.err != nil {
						is.True(errors.Is(err, tc.err)) // refused as it should be
						return
					}
					is.NoErr(err)                                 // opened
					is.Equal(d.Path(), filepath.Join(ws, tc.rel)) // named as the workspace names it
					is.NoErr(d.Close())
				})
			}
		})
	}
}

func TestAgentPathsAreMappedIntoTheWorkspace(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ws", filepath.Join(base, "alias")); err != nil {
		t.Fatal(err)
	}
	r := New(filepath.Join(base, "alias")) // the Hub's name for the folder goes through a link
	for _, tc := range []struct {
		name, path, rel string
		err             error
	}{
		{"a file inside", filepath.Join(base, "alias", "docs", "a.md"), "docs/a.md", nil},
		{"the folder itself", filepath.Join(base, "alias"), ".", nil},
		{"through the resolved folder", filepath.Join(ws, "a.md"), "a.md", nil},
		{"dot-dot that stays", filepath.Join(base, "alias", "docs", "..", "a.md"), "a.md", nil},
		{"dot-dot out", filepath.Join(base, "alias", "..", "outside"), "", ErrOutside},
		{"an absolute path outside", "/etc/passwd", "", ErrOutside},
		{"a sibling sharing the prefix", filepath.Join(base, "alias2", "x"), "", ErrOutside},
		{"a relative path", "docs/a.md", "", ErrNotAbsolute},
		{"a path over PATH_MAX", "/" + strings.Repeat("a", maxPath), "", ErrTooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			rel, err := r.Rel(tc.path)
			if tc.err != nil {
				is.True(errors.Is(err, tc.err)) // refused
				return
			}
			is.NoErr(err)
			is.Equal(rel, tc.rel) // relative to the folder
		})
	}
}
