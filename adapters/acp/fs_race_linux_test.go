package acp

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/sys/unix"
)

// exchangeUntilStopped atomically exchanges the names a and b in a loop
// (RENAME_EXCHANGE), until the returned stop is called (also at the end of
// the test); stop says how many exchanges were made.
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

// TestSwappingAFolderForALinkOutNeverLetsAWriteOrReadOut races the
// agent's writes and reads under docs/ against a loop that exchanges docs
// with a link to the outside folder.
func TestSwappingAFolderForALinkOutNeverLetsAWriteOrReadOut(t *testing.T) {
	is := is.New(t)
	ws, outside := workspaceBeside(t)
	is.NoErr(os.WriteFile(filepath.Join(ws, "docs", "secret"), []byte("inside"), 0o600))
	is.NoErr(os.Symlink("../outside", filepath.Join(ws, "swap")))
	c := &conn{dir: ws}

	stop := exchangeUntilStopped(t, filepath.Join(ws, "docs"), filepath.Join(ws, "swap"))
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
