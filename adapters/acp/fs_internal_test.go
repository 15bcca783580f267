package acp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
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

// The agent learns why a path was refused, as invalid params with a plain
// message that names no host path.
func TestRefusalsAreInvalidParamsWithAPlainMessage(t *testing.T) {
	ws, outside := workspaceBeside(t)
	if err := os.Symlink("../../outside/x", filepath.Join(ws, "docs", "todo.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(outside, "secret"), filepath.Join(ws, "hard")); err != nil {
		t.Fatal(err)
	}
	c := &conn{dir: ws}
	for _, tc := range []struct {
		name, path, says string
	}{
		{"a relative path", "docs/a.md", "must be absolute"},
		{"dot-dot out", filepath.Join(ws, "..", "outside", "secret"), "outside the workspace folder"},
		{"an absolute path outside", filepath.Join(outside, "secret"), "outside the workspace folder"},
		{"a last link", filepath.Join(ws, "docs", "todo.md"), "symbolic link"},
		{"a hard link", filepath.Join(ws, "hard"), "more than one hard link"},
		{"a missing file", filepath.Join(ws, "nothing.md"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			_, err := c.readFile(tc.path, nil, nil)
			var re *acpsdk.RequestError
			is.True(errors.As(err, &re)) // a JSON-RPC error
			is.Equal(re.Code, -32602)    // invalid params
			data, _ := json.Marshal(re.Data)
			is.True(strings.Contains(string(data), tc.says))           // saying why
			is.True(!strings.Contains(string(data), filepath.Dir(ws))) // naming no host path
		})
	}
}
