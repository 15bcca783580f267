package hub

import (
	"context"
	"time"
)

// SystemClock is the Clock of the real world, backed by package time.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Sleep waits d on clock, or until ctx ends; it reports whether d passed.
// A backoff between retries waits with it, so tests move it by hand.
func Sleep(ctx context.Context, clock Clock, d time.Duration) bool {
	fired := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(fired) })
	select {
	case <-fired:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}
