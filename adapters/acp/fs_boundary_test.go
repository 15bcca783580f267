package acp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

// workspaceBeside makes a workspace and an outside folder beside it
// holding a secret, as a cloned repository and a home folder would be.
func workspaceBeside(t *testing.T) (ws, outside string) {
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "docs")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func TestAWriteThroughADanglingLinkIsRefused(t *testing.T) {
	is := is.New(t)
	ws, outside := workspaceBeside(t)
	is.NoErr(os.Symlink("../../outside/x", filepath.Join(ws, "docs", "todo.md")))
	c := &conn{dir: ws}

	err := c.writeFile(filepath.Join(ws, "docs", "todo.md"), "planted")
	is.True(err != nil) // refused
	_, err = os.Lstat(filepath.Join(outside, "x"))
	is.True(os.IsNotExist(err)) // nothing created outside
	target, err := os.Readlink(filepath.Join(ws, "docs", "todo.md"))
	is.NoErr(err)
	is.Equal(target, "../../outside/x") // the link is left as it was
}

func TestAHardLinkToAnOutsideFileIsNeitherReadNorWrittenThrough(t *testing.T) {
	is := is.New(t)
	ws, outside := workspaceBeside(t)
	is.NoErr(os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "notes.txt")))
	c := &conn{dir: ws}

	_, err := c.readFile(filepath.Join(ws, "notes.txt"), nil, nil)
	is.True(err != nil)                                                    // not read
	is.True(c.writeFile(filepath.Join(ws, "notes.txt"), "changed") != nil) // not written
	b, err := os.ReadFile(filepath.Join(outside, "secret"))
	is.NoErr(err)
	is.Equal(string(b), "outside secret") // the outside file is unchanged
}
