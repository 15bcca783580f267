package hub

import (
	"context"
	"sync"
	"time"
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
	last   []Workspace // the last registry read, valid or not
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
	defer h.changed()
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
	s.last = ws
	s.mu.Unlock()
	return ws, parent, nil
}

// registry returns every registered workspace, in registration order. The
// slice is shared: callers must not modify it.
func (h *Hub) registry(ctx context.Context) ([]Workspace, error) {
	ws, _, err := h.snapshot(ctx)
	return ws, err
}

// viewsCache keeps the last computed listing of every workspace, so
// repeated state requests neither rebuild 50 views nor make clients
// re-encode them.
//
// A listing is determined by the registry, the running sessions and the
// cached facts; each change to one of them bumps Hub.viewGen, and a cached
// listing is only reused under the generation it was computed in. It is
// also recomputed once FactsTTL has passed, because computing is what asks
// the facts cache to refresh stale entries: a listing cached for ever would
// never see the facts change. A missed bump therefore costs staleness
// bounded by FactsTTL, the same bound the facts cache already gives.
type viewsCache struct {
	mu    sync.Mutex
	valid bool
	gen   uint64
	at    time.Time
	views workspaceListing
}

// workspaceListing is every registered workspace as it was at one moment, in
// registration order. Listings are shared and read-only.
type workspaceListing struct {
	Views []WorkspaceView
	// Revision identifies this listing: two listings with one revision
	// are the same listing, so clients may cache what they derive from it.
	Revision uint64
}

// changed records that something a listing shows may have changed.
func (h *Hub) changed() { h.viewGen.Add(1) }

// listing returns the current listing of every workspace.
func (h *Hub) listing(ctx context.Context) (workspaceListing, error) {
	now := h.clock.Now()
	gen := h.viewGen.Load()
	c := &h.viewsC
	c.mu.Lock()
	if c.valid && c.gen == gen && now.Sub(c.at) < h.cfg.FactsTTL && !now.Before(c.at) {
		l := c.views
		c.mu.Unlock()
		return l, nil
	}
	c.mu.Unlock()

	ws, err := h.registry(ctx)
	if err != nil {
		return workspaceListing{}, err
	}
	l := workspaceListing{Views: h.views(ctx, ws), Revision: h.listingRev.Add(1)}
	c.mu.Lock()
	// Keep the newest computation; gen was read before computing, so a
	// change during it leaves the listing stale under an old generation.
	if !c.valid || gen >= c.gen {
		c.valid, c.gen, c.at, c.views = true, gen, now, l
	}
	c.mu.Unlock()
	return l, nil
}

// st is an interim view of the registry for the live topics.
type stView struct{ h *Hub }

func (h *Hub) stv() stView { return stView{h} }

// workspaces returns the registry as last read, without reading.
func (v stView) workspaces() []Workspace {
	s := &v.h.snap
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// commonDir returns the common Git directory of w's repository, "" when
// none or unknown.
func (h *Hub) commonDir(ctx context.Context, w Workspace) string {
	return h.folder(ctx, w.Path).repo.CommonDir
}
