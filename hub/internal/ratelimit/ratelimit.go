// Package ratelimit counts failed attempts per key in a sliding window, with
// bounded memory. It has no notion of time of its own: callers pass now.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter allows at most Budget failures per key within Window. An attempt
// is reserved before the expensive work it guards and then settled as a
// failure or a success, so concurrent attempts cannot overspend the budget.
// The number of keys held is bounded by MaxKeys: when full, keys with
// nothing in the window are dropped, then the least recently used ones.
type Limiter struct {
	budget  int
	window  time.Duration
	maxKeys int

	mu   sync.Mutex
	keys map[string]*entry
}

type entry struct {
	fails   []time.Time // oldest first, at most budget
	pending int
	last    time.Time
}

// New returns a Limiter. budget and maxKeys must be positive.
func New(budget int, window time.Duration, maxKeys int) *Limiter {
	return &Limiter{budget: budget, window: window, maxKeys: maxKeys, keys: make(map[string]*entry)}
}

// Allowed reports whether key may make an attempt now, without reserving.
func (l *Limiter) Allowed(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	return e == nil || e.spent(now, l.window) < l.budget
}

// Reserve takes one attempt from key's budget, reporting false (and taking
// nothing) when the budget is spent. Every true must be followed by Fail or
// Succeed.
func (l *Limiter) Reserve(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		l.makeRoom(now)
		e = &entry{}
		l.keys[key] = e
	}
	if e.spent(now, l.window) >= l.budget {
		return false
	}
	e.pending++
	e.last = now
	return true
}

// Fail settles a reserved attempt as a failure.
func (l *Limiter) Fail(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.keys[key]
	if e == nil {
		l.makeRoom(now)
		e = &entry{}
		l.keys[key] = e
	} else if e.pending > 0 {
		e.pending--
	}
	e.fails = append(e.fails, now)
	if len(e.fails) > l.budget {
		e.fails = e.fails[len(e.fails)-l.budget:]
	}
	e.last = now
}

// Succeed settles a reserved attempt as a success and forgets key's failures.
func (l *Limiter) Succeed(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.keys[key]; e != nil {
		e.fails = nil
		if e.pending > 0 {
			e.pending--
		}
		if e.pending == 0 {
			delete(l.keys, key)
		}
	}
}

// Len reports how many keys the limiter holds.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// spent drops failures that left the window and counts what remains.
func (e *entry) spent(now time.Time, window time.Duration) int {
	i := 0
	for i < len(e.fails) && !now.Before(e.fails[i].Add(window)) {
		i++
	}
	e.fails = e.fails[i:]
	return len(e.fails) + e.pending
}

// makeRoom ensures one more key fits. Called with mu held.
func (l *Limiter) makeRoom(now time.Time) {
	if len(l.keys) < l.maxKeys {
		return
	}
	for k, e := range l.keys {
		if e.spent(now, l.window) == 0 {
			delete(l.keys, k)
		}
	}
	for len(l.keys) >= l.maxKeys {
		var oldest string
		var at time.Time
		for k, e := range l.keys {
			if e.pending == 0 && (oldest == "" || e.last.Before(at)) {
				oldest, at = k, e.last
			}
		}
		if oldest == "" {
			return // every key has an attempt in flight; allow a brief overshoot
		}
		delete(l.keys, oldest)
	}
}
