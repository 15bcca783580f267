package acp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

func TestFilesAreConfinedToTheWorkspace(t *testing.T) {
	is := is.New(t)
	root := t.TempDir()
	outside := t.TempDir()
	is.NoErr(os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600))
	is.NoErr(os.Symlink(outside, filepath.Join(root, "escape")))
	is.NoErr(os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\nthree\n"), 0o600))
	c := &conn{dir: root}

	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(root, "a.txt"), true},
		{filepath.Join(root, "new", "file.txt"), true},
		{filepath.Join(root, "..", filepath.Base(outside), "secret"), false},
		{filepath.Join(root, "escape", "secret"), false},
		{filepath.Join(root, "escape", "new.txt"), false},
		{"relative.txt", false},
		{filepath.Join(outside, "secret"), false},
	} {
		_, err := c.confine(tc.path)
		is.Equal(err == nil, tc.ok) // inside the workspace only
	}
	one, two := 2, 1
	got, err := c.readFile(filepath.Join(root, "a.txt"), &one, &two)
	is.NoErr(err)          // read
	is.Equal(got, "two\n") // from line 2, one line
	is.NoErr(c.writeFile(filepath.Join(root, "new", "file.txt"), "hi"))
	b, _ := os.ReadFile(filepath.Join(root, "new", "file.txt"))
	is.Equal(string(b), "hi")                                             // written, its folder made
	is.True(c.writeFile(filepath.Join(root, "escape", "x"), "no") != nil) // never through a link out
	_, err = os.Stat(filepath.Join(outside, "x"))
	is.True(os.IsNotExist(err)) // nothing written outside
}
