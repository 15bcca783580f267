// Package confinetest helps tests race the workspace boundary against a
// tree that changes under it.
package confinetest

import (
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// ExchangeUntilStopped atomically exchanges the names a and b in a loop
// (renameat2 with RENAME_EXCHANGE) until the returned stop is called (at
// the latest when the test ends); stop says how many exchanges were made.
// The loop is bounded (50 million exchanges) and ends at the first
// exchange that fails.
func ExchangeUntilStopped(t testing.TB, a, b string) (stop func() int) {
	quit, done := make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		defer func() { done <- n }()
		for ; n < 50_000_000; n++ {
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
