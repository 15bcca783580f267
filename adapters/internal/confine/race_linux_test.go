package confine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/confine/confinetest"
)

// TestSwappingAFolderForALinkOutNeverLeadsOut writes and reads under
// docs/ while a loop exchanges docs with a link to the outside folder.
func TestSwappingAFolderForALinkOutNeverLeadsOut(t *testing.T) {
	for name, res := range resolversUnderTest(t) {
		t.Run(name, func(t *testing.T) {
			is := is.New(t)
			ws, outside := tree(t)
			is.NoErr(os.WriteFile(filepath.Join(ws, "docs", "secret"), []byte("inside"), 0o600))
			is.NoErr(os.Symlink("../outside", filepath.Join(ws, "swap")))
			r := rootWith(ws, res)

			stop := confinetest.ExchangeUntilStopped(t, filepath.Join(ws, "docs"), filepath.Join(ws, "swap"))
			leaked, wrote, read := 0, 0, 0
			for range 2000 {
				if r.WriteFile("docs/f.txt", []byte("agent text")) == nil {
					wrote++
				}
				got, err := r.ReadFile("docs/secret", 1024)
				if err == nil {
					read++
					if string(got) != "inside" {
						leaked++
					}
				}
			}
			swaps := stop()
			t.Logf("%d exchanges; %d writes and %d reads went through, the rest refused", swaps, wrote, read)
			is.True(swaps > 0)  // the folder was exchanged meanwhile
			is.True(wrote > 0)  // writes went on inside
			is.Equal(leaked, 0) // no read returned the outside secret
			_, err := os.Lstat(filepath.Join(outside, "f.txt"))
			is.True(os.IsNotExist(err)) // nothing written outside
		})
	}
}
