// Package ratelimit counts failed attempts per key in a sliding window, with
// bounded memory. It has no notion of time of its own: callers pass now.
package ratelimit

import (
	"sync"
	"time"
)

// Config shapes a Limiter.
type Config struct {
	// Budget is how many failures a key may have within Window before it
	// is limited. Must be positive.
	Budget int
	Window time.Duration
	// MaxKeys bounds the keys held. Must be positive. A full table drops
	// the keys that have nothing in their window; when none can be
	// dropped it refuses new keys. It never forgets a key that still holds
	// failures or an attempt in flight, so filling the table with junk
	// keys cannot reset a real key's budget.
	MaxKeys int
	// Delay, when positive, makes the limiter slow a key down instead of
	// refusing it: past Budget failures in the window, an attempt is
	// allowed once Delay has passed since the key's previous attempt, the
	// delay doubling with each further failure in the window up to
	// MaxDelay (at least Delay).
	Delay    time.Duration
	MaxDelay time.Duration
}

// Limiter allows at most Budget failures per key within Window, or, when
// Config.Delay is set, slows a key down past Budget failures. An attempt
// is reserved before the expensive work it guards and then settled, so
// concurrent attempts cannot overspend the budget or the delay.
type Limiter struct {
	cfg  Config
	keep int // failure times kept per key: more could not change an answer

	mu   sync.Mutex
	keys map[string]*entry
	// nextSweep is the earliest time a key without attempts in flight
	// may have emptied its window: before it, a full table has nothing
	// to drop and does not look. Zero: look.
	nextSweep time.Time
}

type entry struct {
	fails   []time.Time // oldest first, at most keep
	pending int         // attempts reserved and not yet settled
	last    time.Time   // the latest reserved attempt (slow-down)
}

// never is later than any time a caller passes.
var never = time.Unix(1<<62, 0)

// New returns a Limiter.
func New(cfg Config) *Limiter {
	keep := cfg.Budget
	if cfg.Delay > 0 {
		if cfg.MaxDelay < cfg.Delay {
			cfg.MaxDelay = cfg.Delay
		}
		// From Budget+steps failures on, the delay is MaxDelay.
		steps := 0
		for d := cfg.Delay; d < cfg.MaxDelay; d *= 2 {
			steps++
		}
		keep = cfg.Budget + steps + 1
	}
	return &Limiter{cfg: cfg, keep: keep, keys: make(map[string]*entry)}
}

// Check reports whether key may make an attempt now, without reserving
// one. When it may not, wait is how long until it may, or zero when that
// is not known (the table is full).
func (l *Limiter) Check(key string, now time.Time) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		return len(l.keys) < l.cfg.MaxKeys || l.sweep(now), 0
	}
	return l.allowed(e, now)
}

// Reserve takes one attempt for key, or reports (taking nothing) why it
// may not: as Check. Every true must be followed by exactly one Fail,
// Succeed or Release of key.
func (l *Limiter) Reserve(key string, now time.Time) (ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		if len(l.keys) >= l.cfg.MaxKeys && !l.sweep(now) {
			return false, 0
		}
		e = &entry{}
		l.keys[key] = e
	}
	if ok, wait := l.allowed(e, now); !ok {
		return false, wait
	}
	e.pending++
	e.last = now
	return true, 0
}

// Fail settles a reserved attempt as a failure.
func (l *Limiter) Fail(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil { // not reserved: count it if there is room
		if len(l.keys) >= l.cfg.MaxKeys && !l.sweep(now) {
			return
		}
		e = &entry{}
		l.keys[key] = e
	} else if e.pending > 0 {
		e.pending--
	}
	e.fails = append(e.fails, now)
	if len(e.fails) > l.keep {
		e.fails = append(e.fails[:0], e.fails[len(e.fails)-l.keep:]...)
	}
	l.settled(key, e)
}

// Succeed settles a reserved attempt as a success and forgets key's
// failures.
func (l *Limiter) Succeed(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.keys[key]; e != nil {
		e.fails = nil
		if e.pending > 0 {
			e.pending--
		}
		l.settled(key, e)
	}
}

// Release settles a reserved attempt without counting it either way: it
// was refused by another limit before it ran, or its success says nothing
// about the failures key holds, which stay. For a slowed-down key the
// attempt still counts as the previous one.
func (l *Limiter) Release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.keys[key]; e != nil {
		if e.pending > 0 {
			e.pending--
		}
		l.settled(key, e)
	}
}

// Len reports how many keys the limiter holds.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// allowed answers Check for a held key. Called with mu held.
func (l *Limiter) allowed(e *entry, now time.Time) (bool, time.Duration) {
	l.trim(e, now)
	n := len(e.fails) + e.pending
	if n < l.cfg.Budget {
		return true, 0
	}
	if l.cfg.Delay > 0 {
		need := l.cfg.MaxDelay
		if step := n - l.cfg.Budget; step < 62 && l.cfg.Delay<<step < need && l.cfg.Delay<<step > 0 {
			need = l.cfg.Delay << step
		}
		if at := e.last.Add(need); now.Before(at) {
			return false, at.Sub(now)
		}
		return true, 0
	}
	// n drops below Budget once drop of the failures have left the window.
	if drop := n - l.cfg.Budget + 1; drop <= len(e.fails) {
		return false, e.fails[drop-1].Add(l.cfg.Window).Sub(now)
	}
	return false, 0 // attempts in flight fill the budget: not known
}

// trim drops the failures that have left the window.
func (l *Limiter) trim(e *entry, now time.Time) {
	i := 0
	for i < len(e.fails) && !now.Before(e.fails[i].Add(l.cfg.Window)) {
		i++
	}
	if i > 0 {
		e.fails = append(e.fails[:0], e.fails[i:]...)
	}
}

// settled forgets key when it holds nothing, else notes when it may
// become droppable. Called with mu held.
func (l *Limiter) settled(key string, e *entry) {
	switch {
	case e.pending > 0:
	case len(e.fails) == 0:
		delete(l.keys, key)
	default:
		if at := e.fails[len(e.fails)-1].Add(l.cfg.Window); at.Before(l.nextSweep) {
			l.nextSweep = at
		}
	}
}

// sweep drops the keys that have nothing in their window and reports
// whether that made room for one more. It does not look before nextSweep,
// so a flood of new keys at a full table costs no scan each. Called with
// mu held.
func (l *Limiter) sweep(now time.Time) bool {
	if now.Before(l.nextSweep) {
		return false
	}
	next := never
	for k, e := range l.keys {
		if e.pending > 0 {
			continue // settling it notes its time
		}
		l.trim(e, now)
		if len(e.fails) == 0 {
			delete(l.keys, k)
			continue
		}
		if at := e.fails[len(e.fails)-1].Add(l.cfg.Window); at.Before(next) {
			next = at
		}
	}
	l.nextSweep = next
	return len(l.keys) < l.cfg.MaxKeys
}
