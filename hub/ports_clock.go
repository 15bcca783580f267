package hub

import "time"

// The time port: the only way time enters the core.

// Clock is the only source of time in the core, so tests can move time by
// hand. Implementations are safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to be called once d has elapsed, unless the
	// returned Timer is stopped first. f may run on any goroutine, so it
	// must not need a lock its scheduler holds. A non-positive d fires as
	// soon as possible.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started and reports whether it
	// did so.
	Stop() bool
}
