// Package keylock provides mutual exclusion per string key, with waits that
// honour a context. Locks for many keys are taken in sorted order, which is
// the one ordering rule that keeps multi-key holders from deadlocking.
package keylock

import (
	"context"
	"slices"
	"sync"
)

// Locks is a set of mutexes named by keys. The zero value is ready to use.
// A key's entry exists only while someone holds or waits for it.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*entry
}

type entry struct {
	ch   chan struct{} // holds one token while the key is locked
	refs int           // holders and waiters
}

// Lock locks key, waiting until it is free or ctx ends. It returns the
// unlock function, or ctx's error with nothing held.
func (l *Locks) Lock(ctx context.Context, key string) (unlock func(), err error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*entry{}
	}
	e := l.locks[key]
	if e == nil {
		e = &entry{ch: make(chan struct{}, 1)}
		l.locks[key] = e
	}
	e.refs++
	l.mu.Unlock()

	select {
	case e.ch <- struct{}{}:
	case <-ctx.Done():
		l.release(key, e)
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-e.ch
			l.release(key, e)
		})
	}, nil
}

func (l *Locks) release(key string, e *entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		delete(l.locks, key)
	}
}

// LockAll locks every key, in sorted order and each once. On failure it
// holds nothing.
func (l *Locks) LockAll(ctx context.Context, keys []string) (unlock func(), err error) {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	unlocks := make([]func(), 0, len(keys))
	all := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, k := range keys {
		u, err := l.Lock(ctx, k)
		if err != nil {
			all()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return all, nil
}
