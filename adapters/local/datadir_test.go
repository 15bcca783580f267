package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
)

func TestWorkspaceDataDirectories(t *testing.T) {
	is := is.New(t)
	state := t.TempDir()
	b, err := local.New(local.Options{RuntimeDir: filepath.Join(state, "s"), DataDir: filepath.Join(state, "workspaces")})
	is.NoErr(err) // the data directory is made
	fi, err := os.Stat(filepath.Join(state, "workspaces"))
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // private

	a, err := b.DataDirOf("alpha")
	is.NoErr(err)
	fi, err = os.Stat(a)
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // each workspace's too
	again, _ := b.DataDirOf("alpha")
	is.Equal(again, a) // the same one at every start
	other, _ := b.DataDirOf("beta")
	is.True(other != a)                            // one per workspace
	is.Equal(filepath.Dir(a), filepath.Dir(other)) // side by side

	open := filepath.Join(state, "open")
	is.NoErr(os.Mkdir(open, 0o755))
	_, err = local.New(local.Options{RuntimeDir: filepath.Join(state, "s2"), DataDir: open})
	is.True(err != nil) // a data directory open to others is refused
}

func TestRemovingAWorkspacesDataTakesItsDirectoryOnly(t *testing.T) {
	is := is.New(t)
	state := t.TempDir()
	b, err := local.New(local.Options{RuntimeDir: filepath.Join(state, "s"), DataDir: filepath.Join(state, "workspaces")})
	is.NoErr(err)
	alpha, err := b.DataDirOf("alpha")
	is.NoErr(err)
	beta, err := b.DataDirOf("beta")
	is.NoErr(err)
	outside := filepath.Join(state, "outside")
	is.NoErr(os.WriteFile(outside, []byte("keep"), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(alpha, "conversations.json"), []byte("[]"), 0o600))
	is.NoErr(os.Mkdir(filepath.Join(alpha, "sub"), 0o700))
	is.NoErr(os.Symlink(outside, filepath.Join(alpha, "sub", "link")))

	is.NoErr(b.RemoveWorkspaceData(t.Context(), "alpha"))
	_, err = os.Lstat(alpha)
	is.True(errors.Is(err, fs.ErrNotExist)) // the directory is gone, with all it held
	_, err = os.Stat(beta)
	is.NoErr(err) // another workspace's stays
	got, err := os.ReadFile(outside)
	is.NoErr(err)
	is.Equal(string(got), "keep")                         // and a link inside was removed, not followed
	is.NoErr(b.RemoveWorkspaceData(t.Context(), "alpha")) // removing it again succeeds: a cut-short removal can be finished
}
