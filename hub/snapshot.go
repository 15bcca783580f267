package hub

import (
	"context"
	"sync"
)

// registrySnapshot keeps the registry and the default-parent preference as
// last read from the Store, so the Hub's most frequent requests (state,
// listings) need no transaction of their own.
//
// It is correct because a Hub is the only writer of workspaces and settings
// in its Store (wharf user, the other writer of the daemon's database, only
// touches users and sessions), and every write goes through Hub.update,
// which invalidates the snapshot once the write has ended. A read that
// raced a write is never kept: loads are stamped with the generation they
// began in and dropped if a write ended meanwhile.
type registrySnapshot struct {
	mu     sync.Mutex
	gen    uint64 // bumped by every invalidation
	valid  bool
	ws     []Workspace // shared and read-only; in registration order
	parent string      // the configured default parent, "" when none
}

func (s *registrySnapshot) invalidate() {
	s.mu.Lock()
	s.gen++
	s.valid = false
	s.ws = nil
	s.mu.Unlock()
}

// update runs fn in a write transaction of the Store and then drops the
// registry snapshot, whether or not fn committed: a failed commit may still
// have been applied by a store that reports errors late, and a reload costs
// one read.
func (h *Hub) update(ctx context.Context, fn func(Tx) error) error {
	defer h.snap.invalidate()
	return h.store.Update(ctx, fn)
}

// snapshot returns the registry, in registration order, and the configured
// default parent. The slice is shared: callers must not modify it.
func (h *Hub) snapshot(ctx context.Context) ([]Workspace, string, error) {
	s := &h.snap
	s.mu.Lock()
	if s.valid {
		ws, parent := s.ws, s.parent
		s.mu.Unlock()
		return ws, parent, nil
	}
	gen := s.gen
	s.mu.Unlock()

	var ws []Workspace
	var parent string
	if err := h.store.View(ctx, func(tx Tx) error {
		var err error
		if ws, err = tx.Workspaces(); err != nil {
			return err
		}
		parent, _, err = tx.Setting(settingDefaultParent)
		return err
	}); err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	if s.gen == gen {
		s.ws, s.parent, s.valid = ws, parent, true
	}
	s.mu.Unlock()
	return ws, parent, nil
}

// registry returns every registered workspace, in registration order. The
// slice is shared: callers must not modify it.
func (h *Hub) registry(ctx context.Context) ([]Workspace, error) {
	ws, _, err := h.snapshot(ctx)
	return ws, err
}
