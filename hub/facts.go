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
	git               memo[folderFacts]           // by folder path
	workspaceSessions memo[WorkspaceSessionFacts] // by workspace id
}

// folderFacts are what a listing shows about a workspace's folder.
type folderFacts struct {
	missing bool
	repo    Repository // zero when in no repository or git could not tell
}

type memo[T any] struct {
	mu    sync.Mutex
	cells map[string]*cell[T]
	// changed, when set, is called after a looked-up value is published or
	// a key forgotten, so listings built from older values are not reused.
	changed func()
	// background counts the refreshes running behind a stale answer;
	// Hub.Close waits for them.
	background sync.WaitGroup
}

type cell[T any] struct {
	val   T
	err   error
	at    time.Time
	valid bool
	wait  chan struct{} // non-nil while a lookup runs; closed when it ends
}

// get returns the cached value of key. A value older than ttl is still
// returned at once while a refresh runs in the background, so a listing
// never waits for git or a child once it has seen a workspace; only a key
// never looked up runs fetch in the caller, sharing it with concurrent
// callers. Errors are cached like values, so a wedged child costs one
// timeout per ttl rather than one per request.
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
	if c.valid {
		v, err := c.val, c.err
		if c.wait == nil && (now.Sub(c.at) >= ttl || now.Before(c.at)) {
			wait := make(chan struct{})
			c.wait = wait
			m.background.Go(func() { m.refresh(c, wait, now, fetch) })
		}
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
	return m.refresh(c, wait, now, fetch)
}

// refresh runs fetch for c and publishes its result.
func (m *memo[T]) refresh(c *cell[T], wait chan struct{}, now time.Time, fetch func() (T, error)) (T, error) {
	v, err := fetch()
	m.mu.Lock()
	c.val, c.err, c.at, c.valid, c.wait = v, err, now, true, nil
	m.mu.Unlock()
	close(wait)
	if m.changed != nil {
		m.changed()
	}
	return v, err
}

// forget drops key, so the next get looks it up afresh.
func (m *memo[T]) forget(key string) {
	m.mu.Lock()
	delete(m.cells, key)
	m.mu.Unlock()
	if m.changed != nil {
		m.changed()
	}
}

// folder returns the facts of dir, cached.
func (h *Hub) folder(ctx context.Context, dir string) folderFacts {
	f, _ := h.facts.git.get(ctx, dir, h.clock.Now(), h.cfg.FactsTTL, func() (folderFacts, error) {
		if !h.isDir(dir) {
			return folderFacts{missing: true}, nil
		}
		// The lookup may outlive the request that started it, not the Hub.
		ctx, cancel := context.WithTimeout(h.bg, h.cfg.FactsTimeout)
		defer cancel()
		repo, err := h.git.Inspect(ctx, dir)
		if err != nil {
			repo = Repository{}
		}
		return folderFacts{repo: repo}, nil
	})
	return f
}

// workspaceSessionFacts returns a running session's facts, cached.
func (h *Hub) workspaceSessionFacts(ctx context.Context, id string, ls *runningWorkspace) (WorkspaceSessionFacts, error) {
	return h.facts.workspaceSessions.get(ctx, id, h.clock.Now(), h.cfg.FactsTTL, func() (WorkspaceSessionFacts, error) {
		ctx, cancel := context.WithTimeout(h.bg, h.cfg.FactsTimeout)
		defer cancel()
		return ls.rs.Facts(ctx)
	})
}
