package hub

import (
	"context"
	"sync"
	"time"
)

// factsCache keeps what workspace listings show but is costly to learn on
// every request: a folder's Git facts (a git process each) and a running
// session's own facts (a call to the child). Entries live for
// Config.FactsTTL; concurrent misses of one entry share one lookup.
type factsCache struct {
	git      memo[Repository]   // by folder path
	sessions memo[SessionFacts] // by workspace id
}

type memo[T any] struct {
	mu    sync.Mutex
	cells map[string]*cell[T]
}

type cell[T any] struct {
	val   T
	err   error
	at    time.Time
	valid bool
	wait  chan struct{} // non-nil while a lookup runs; closed when it ends
}

// get returns the cached value of key while it is younger than ttl, and
// otherwise runs fetch, unless another caller's fetch is running, whose
// result it then shares. Errors are cached like values, so a wedged child
// costs one timeout per ttl rather than one per request.
func (m *memo[T]) get(ctx context.Context, key string, now time.Time, ttl time.Duration, fetch func() (T, error)) (T, error) {
	m.mu.Lock()
	if m.cells == nil {
		m.cells = map[string]*cell[T]{}
	}
	c := m.cells[key]
	if c == nil {
		c = &cell[T]{}
		m.cells[key] = c
	}
	if c.valid && now.Sub(c.at) < ttl && !now.Before(c.at) {
		v, err := c.val, c.err
		m.mu.Unlock()
		return v, err
	}
	if wait := c.wait; wait != nil {
		m.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		return c.val, c.err
	}
	wait := make(chan struct{})
	c.wait = wait
	m.mu.Unlock()

	v, err := fetch()
	m.mu.Lock()
	c.val, c.err, c.at, c.valid, c.wait = v, err, now, true, nil
	m.mu.Unlock()
	close(wait)
	return v, err
}

// forget drops key, so the next get looks it up afresh.
func (m *memo[T]) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cells, key)
}

// repository returns the Git facts of dir, cached.
func (h *Hub) repository(ctx context.Context, dir string) (Repository, error) {
	return h.facts.git.get(ctx, dir, h.clock.Now(), h.cfg.FactsTTL, func() (Repository, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.FactsTimeout)
		defer cancel()
		return h.git.Inspect(ctx, dir)
	})
}

// sessionFacts returns a running session's facts, cached.
func (h *Hub) sessionFacts(ctx context.Context, id string, ls *liveSession) (SessionFacts, error) {
	return h.facts.sessions.get(ctx, id, h.clock.Now(), h.cfg.FactsTTL, func() (SessionFacts, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.cfg.FactsTimeout)
		defer cancel()
		return ls.rs.Facts(ctx)
	})
}
