package porttest

import (
	"errors"
	"io/fs"
	"path"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// FSHarness is a file system under test: the FS, an empty directory Root
// inside it, and the setup helpers the suite needs that hub.FS lacks.
type FSHarness struct {
	FS        hub.FS
	Root      string
	WriteFile func(path string) error
	Symlink   func(target, path string) error
}

// FS runs the hub.FS contract against harnesses made by newFS.
func FS(t *testing.T, newFS func(t *testing.T) FSHarness) {
	t.Run("MkdirLstatReadDir", func(t *testing.T) {
		is := is.New(t)
		h := newFS(t)
		a := path.Join(h.Root, "b-dir")
		is.NoErr(h.FS.Mkdir(a))                                                   // mkdir
		is.NoErr(h.FS.Mkdir(path.Join(h.Root, "a-dir")))                          // mkdir
		is.True(errors.Is(h.FS.Mkdir(a), fs.ErrExist))                            // mkdir never replaces
		is.True(errors.Is(h.FS.Mkdir(path.Join(h.Root, "no/x")), fs.ErrNotExist)) // missing parent
		is.NoErr(h.WriteFile(path.Join(h.Root, "c-file")))
		fi, err := h.FS.Lstat(a)
		is.NoErr(err)
		is.True(fi.IsDir()) // a directory
		_, err = h.FS.Lstat(path.Join(h.Root, "none"))
		is.True(errors.Is(err, fs.ErrNotExist)) // absent
		es, err := h.FS.ReadDir(h.Root)
		is.NoErr(err)
		is.Equal(len(es), 3)                                                           // three entries
		is.Equal(es[0].Name()+","+es[1].Name()+","+es[2].Name(), "a-dir,b-dir,c-file") // sorted
		is.True(es[0].IsDir() && !es[2].IsDir())                                       // kinds reported
	})

	t.Run("RenameNoReplace", func(t *testing.T) {
		is := is.New(t)
		h := newFS(t)
		src, dst, other := path.Join(h.Root, "src"), path.Join(h.Root, "dst"), path.Join(h.Root, "other")
		is.NoErr(h.FS.Mkdir(src))
		is.NoErr(h.FS.Mkdir(path.Join(src, "inner")))
		is.NoErr(h.FS.Mkdir(other))
		is.True(errors.Is(h.FS.RenameNoReplace(src, other), fs.ErrExist)) // an existing directory is never replaced
		is.NoErr(h.WriteFile(path.Join(h.Root, "file")))
		is.True(errors.Is(h.FS.RenameNoReplace(src, path.Join(h.Root, "file")), fs.ErrExist)) // nor a file
		is.True(h.FS.RenameNoReplace(src, path.Join(src, "inner", "x")) != nil)               // not into itself
		is.NoErr(h.FS.RenameNoReplace(src, dst))                                              // rename
		_, err := h.FS.Lstat(path.Join(dst, "inner"))
		is.NoErr(err) // contents moved along
		_, err = h.FS.Lstat(src)
		is.True(errors.Is(err, fs.ErrNotExist))                                  // source gone
		is.True(errors.Is(h.FS.RenameNoReplace(src, other+"2"), fs.ErrNotExist)) // missing source
	})

	t.Run("RemoveEmpty", func(t *testing.T) {
		is := is.New(t)
		h := newFS(t)
		d := path.Join(h.Root, "d")
		is.NoErr(h.FS.Mkdir(d))
		is.NoErr(h.WriteFile(path.Join(d, ".hidden")))
		is.True(errors.Is(h.FS.RemoveEmpty(d), hub.ErrNotEmpty)) // a hidden file counts
		f := path.Join(h.Root, "f")
		is.NoErr(h.WriteFile(f))
		is.True(errors.Is(h.FS.RemoveEmpty(f), hub.ErrNotDir)) // files are refused
		e := path.Join(h.Root, "e")
		is.NoErr(h.FS.Mkdir(e))
		l := path.Join(h.Root, "l")
		is.NoErr(h.Symlink(e, l))
		is.True(errors.Is(h.FS.RemoveEmpty(l), hub.ErrNotDir)) // a symlink is refused
		_, err := h.FS.Lstat(e)
		is.NoErr(err)                                           // and its target kept
		is.NoErr(h.FS.RemoveEmpty(e))                           // remove an empty directory
		is.True(errors.Is(h.FS.RemoveEmpty(e), fs.ErrNotExist)) // twice
	})

	t.Run("EvalSymlinks", func(t *testing.T) {
		is := is.New(t)
		h := newFS(t)
		real := path.Join(h.Root, "real")
		is.NoErr(h.FS.Mkdir(real))
		is.NoErr(h.FS.Mkdir(path.Join(real, "sub")))
		is.NoErr(h.Symlink(real, path.Join(h.Root, "abs")))
		is.NoErr(h.Symlink("real", path.Join(h.Root, "rel")))
		base, err := h.FS.EvalSymlinks(h.Root)
		is.NoErr(err)
		for _, p := range []string{"abs/sub", "rel/sub", "real/sub"} {
			got, err := h.FS.EvalSymlinks(path.Join(h.Root, p))
			is.NoErr(err)                              // resolves
			is.Equal(got, path.Join(base, "real/sub")) // to the real path
		}
		_, err = h.FS.EvalSymlinks(path.Join(h.Root, "abs/none"))
		is.True(errors.Is(err, fs.ErrNotExist)) // missing
		fi, err := h.FS.Lstat(path.Join(h.Root, "abs"))
		is.NoErr(err)
		is.True(fi.Mode()&fs.ModeSymlink != 0) // Lstat does not follow
	})

	t.Run("Home", func(t *testing.T) {
		is := is.New(t)
		h := newFS(t)
		home, err := h.FS.Home()
		is.NoErr(err)
		is.True(path.IsAbs(home)) // absolute
	})
}
