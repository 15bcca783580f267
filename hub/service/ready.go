package service

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Readiness: whether the Hub should be sent traffic (a load balancer's or
// an orchestrator's readiness probe). The answer is cheap by design: the
// probe is unauthenticated, so anyone may ask it as often as they like,
// and what it costs the store is bounded by readyProbeTTL whatever the
// rate.

// The bounds of the store probe.
const (
	// readyProbeTTL is how long one probe's answer stands: asks within it
	// share the answer, so at most one write transaction a second is
	// spent on readiness.
	readyProbeTTL = time.Second
	// readyProbeTimeout bounds one probe: a store that cannot take a
	// write transaction within it is not ready.
	readyProbeTimeout = 2 * time.Second
)

// Why the Hub is not ready. The messages are for logs and tests; the
// transport answers none of them (a probe's answer carries no detail).
var (
	errNotRecovered = hub.Errorf(hub.Unavailable, "the Hub has not finished recovery")
	errDraining     = hub.Errorf(hub.Unavailable, "the Hub is shutting down")
	errJournals     = hub.Errorf(hub.Unavailable, "a recovery journal is pending")
)

// readiness is what Ready keeps between asks.
type readiness struct {
	recovered atomic.Bool // Recover completed
	draining  atomic.Bool // Drain was called

	mu  sync.Mutex // one probe at a time; the others wait for its answer
	at  time.Time  // when the last probe answered; zero before the first
	err error      // its answer
}

// Ready returns nil when the Hub should be sent traffic: Recover has
// completed, no recovery journal is pending (one fences folder and
// workspace changes until a restart recovers it), the store takes a write
// transaction within readyProbeTimeout (none of the callers' errors: an
// empty one, through the commit path, which proves that the database is
// open, not locked by another writer and not wedged by a commit that does
// not end), and neither Drain nor Close was called. Otherwise it returns an
// Unavailable error saying why. The store's answer is reused for
// readyProbeTTL, so Ready costs at most one probe a second.
func (h *Hub) Ready(ctx context.Context) error {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	switch {
	case !h.ready.recovered.Load():
		return errNotRecovered
	case closed || h.ready.draining.Load():
		return errDraining
	case h.PendingJournals() > 0:
		return errJournals
	}
	return h.probeStore(ctx)
}

// probeStore answers whether the store takes a write transaction, from
// the last probe while it stands, else from a new one.
func (h *Hub) probeStore(ctx context.Context) error {
	r := &h.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := h.clock.Now(); !r.at.IsZero() && now.Sub(r.at) < readyProbeTTL && now.Sub(r.at) >= 0 {
		return r.err
	}
	// Not cancelled by the asker: the answer is shared with the next
	// ones, so one client hanging up must not make it a failure.
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	t := h.clock.AfterFunc(readyProbeTimeout, cancel)
	defer t.Stop()
	err := h.commit(pctx, func(*writes) error { return nil })
	if err != nil {
		err = hub.Wrap(hub.Unavailable, err, "the database does not take a write")
	}
	r.at, r.err = h.clock.Now(), err
	return err
}

// Drain marks the Hub as shutting down: Ready answers Unavailable from
// now on, so a load balancer stops sending traffic while requests in
// flight end. Nothing else changes; Close does the rest. The daemon calls
// it when its shutdown begins.
func (h *Hub) Drain() { h.ready.draining.Store(true) }
