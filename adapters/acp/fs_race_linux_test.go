package acp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/confine/confinetest"
)

// TestSwappingAFolderForALinkOutNeverLetsAWriteOrReadOut races the
// agent's writes and reads under docs/ against a loop that exchanges docs
// with a link to the outside folder.
func TestSwappingAFolderForALinkOutNeverLetsAWriteOrReadOut(t *testing.T) {
	is := is.New(t)
	ws, outside := workspaceBeside(t)
	is.NoErr(os.WriteFile(filepath.Join(ws, "docs", "secret"), []byte("inside"), 0o600))
	is.NoErr(os.Symlink("../outside", filepath.Join(ws, "swap")))
	c := &conn{dir: ws}

	stop := confinetest.ExchangeUntilStopped(t, filepath.Join(ws, "docs"), filepath.Join(ws, "swap"))
	leaked := 0
	for range 3000 {
		_ = c.writeFile(filepath.Join(ws, "docs", "f.txt"), "agent text")
		if got, err := c.readFile(filepath.Join(ws, "docs", "secret"), nil, nil); err == nil && got != "inside" {
			leaked++
		}
	}
	is.True(stop() > 0) // the folder was swapped meanwhile
	is.Equal(leaked, 0) // no read returned the outside secret
	_, err := os.Lstat(filepath.Join(outside, "f.txt"))
	is.True(os.IsNotExist(err)) // nothing written outside
}
