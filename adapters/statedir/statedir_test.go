package statedir_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/statedir"
)

func TestOpen(t *testing.T) {
	is := is.New(t)
	root := t.TempDir()
	p := filepath.Join(root, "a", "wharf")
	d, err := statedir.Open(p)
	is.NoErr(err) // created
	fi, err := os.Stat(p)
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // private
	is.Equal(d.Path("wharf.db"), filepath.Join(d.Root(), "wharf.db"))

	open := filepath.Join(root, "open")
	is.NoErr(os.Mkdir(open, 0o750))
	_, err = statedir.Open(open)
	is.True(err != nil && strings.Contains(err.Error(), "chmod 700")) // group-readable is refused, with the fix

	link := filepath.Join(root, "link")
	is.NoErr(os.Symlink(p, link))
	_, err = statedir.Open(link)
	is.True(err != nil && strings.Contains(err.Error(), "symbolic link")) // a symlink is refused
}

func TestLock(t *testing.T) {
	is := is.New(t)
	p := filepath.Join(t.TempDir(), "state")
	a, err := statedir.Open(p)
	is.NoErr(err)
	is.NoErr(a.Lock()) // first holder
	b, err := statedir.Open(p)
	is.NoErr(err)
	err = b.Lock()
	is.True(errors.Is(err, statedir.ErrLocked))                      // second is refused
	is.True(strings.Contains(err.Error(), "pid "+itoa(os.Getpid()))) // naming the holder
	is.NoErr(a.Close())
	is.NoErr(b.Lock()) // free after release
	is.NoErr(b.Close())
	fi, err := os.Stat(filepath.Join(p, "wharf.lock"))
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // the lock file is private
}

func itoa(n int) string { return strconv.Itoa(n) }
