package confine

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"
)

// exchangeUntilStopped atomically exchanges the names a and b in a loop
// (RENAME_EXCHANGE) until the returned stop is called (at the latest when
// the test ends); stop says how many exchanges were made.
func exchangeUntilStopped(t *testing.T, a, b string) (stop func() int) {
	quit, done := make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		defer func() { done <- n }()
		for ; n < 50_000_000; n++ { // a bound; stopped long before
			select {
			case <-quit:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) != nil {
				return
			}
		}
	}()
	var once sync.Once
	n := 0
	stop = func() int {
		once.Do(func() { close(quit); n = <-done })
		return n
	}
	t.Cleanup(func() { stop() })
	return stop
}

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

			stop := exchangeUntilStopped(t, filepath.Join(ws, "docs"), filepath.Join(ws, "swap"))
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
