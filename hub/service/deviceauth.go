package service

import (
	"context"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// deviceAuth keeps the active device sessions in memory, by digest, so
// authenticating a request reads no store: the Hub's most frequent
// requests cost a hash and a map lookup.
//
// It is kept current two ways. The Hub's own logins, logouts,
// revocations, password changes and user removals reach it through the
// commit path before the operation returns, so a revoked session is
// refused on its very next request, on every connection. Changes another
// process commits (`wharf user passwd` beside a running daemon) move the
// store's ExternalGeneration, which every lookup compares for free; a
// change there reloads the table before the lookup answers.
type deviceAuth struct {
	h *Hub

	mu        sync.RWMutex
	loaded    bool
	gen       uint64 // the store's ExternalGeneration the table reflects
	byDigest  map[hub.DeviceSessionDigest]hub.DeviceSession
	reloading bool           // a reload is reading the store
	missed    []deviceChange // changes applied while it did, replayed onto its read

	reloadMu sync.Mutex // one reload at a time
}

// lookup returns the session with digest d when it is active at the Hub's
// now, errNoDeviceSession when there is none, or the store's error.
func (a *deviceAuth) lookup(ctx context.Context, d hub.DeviceSessionDigest) (hub.DeviceSession, error) {
	for first := true; ; first = false {
		g := a.h.store.ExternalGeneration()
		a.mu.RLock()
		current := a.loaded && a.gen == g
		s, ok := a.byDigest[d]
		a.mu.RUnlock()
		// Once reloaded, a generation that moved again during the reload
		// is not chased: what was read is newer than anything this request
		// could have been sent after.
		if !current && first {
			if err := a.reload(ctx, g); err != nil {
				return hub.DeviceSession{}, err
			}
			continue
		}
		if !ok || !s.Active(a.h.clock.Now()) {
			return hub.DeviceSession{}, errNoDeviceSession
		}
		return s, nil
	}
}

// reload reads the active sessions from the store as of generation g (or
// later) and ends the live streams of the sessions that are gone.
func (a *deviceAuth) reload(ctx context.Context, g uint64) error {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	a.mu.Lock()
	if a.loaded && a.gen == g {
		a.mu.Unlock()
		return nil // another request reloaded meanwhile
	}
	a.reloading, a.missed = true, nil
	a.mu.Unlock()

	var active []hub.DeviceSession
	err := a.h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		active, err = tx.ActiveDeviceSessions(a.h.clock.Now())
		return err
	})

	a.mu.Lock()
	a.reloading = false
	if err != nil {
		a.missed = nil
		a.mu.Unlock()
		return err
	}
	table := make(map[hub.DeviceSessionDigest]hub.DeviceSession, len(active))
	for _, s := range active {
		table[s.Digest] = s
	}
	for _, c := range a.missed {
		c.applyTo(table)
	}
	a.missed = nil
	var gone []hub.DeviceSessionDigest
	for d := range a.byDigest {
		if _, ok := table[d]; !ok {
			gone = append(gone, d)
		}
	}
	a.byDigest, a.gen, a.loaded = table, g, true
	a.mu.Unlock()

	if len(gone) > 0 {
		a.h.settle(ctx, deviceSessionsGone{digests: gone})
	}
	return nil
}

// unsure marks the table as possibly behind the store (a commit failed in
// a way that may have written): the next lookup reads the store again.
func (a *deviceAuth) unsure() {
	a.mu.Lock()
	a.loaded = false
	a.mu.Unlock()
}

// apply applies a committed change to the table (and to a reload under
// way, which read the store before or after it).
func (a *deviceAuth) apply(c deviceChange) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.reloading {
		a.missed = append(a.missed, c)
	}
	if a.loaded {
		c.applyTo(a.byDigest)
	}
}
