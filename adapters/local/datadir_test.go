package local_test

import (
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
