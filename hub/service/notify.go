package service

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// The push-notification engine: the rules of hub/notify run over the
// Store, the running sessions' notification feeds, the live broker's
// presence and the Pusher.
//
// What it keeps in memory (devices, the delivery journal, the feeds'
// cursors) is a copy of the store that only the commit path changes
// (changes_notify.go): every delivery is journaled before it is sent and
// every answer is journaled before the next step, so a Hub killed at any
// point restarts with each unsent delivery still to send and each sent
// one settled. A send the push service took just before a kill, whose
// answer was never journaled, is sent again with the same payload id and
// Topic: the device replaces the first notification with it rather than
// showing two.
//
// Goroutines: one observer per running workspace that an enabled device
// covers (notifywatch.go), one scheduler (notifysend.go) woken by the
// Clock's timers, by presence and by commits, and at most notify.MaxSends
// sends. Lock order: commitMu, then pushEngine.mu; the broker calls
// presence with its own lock held, so presence takes only pushEngine.mu
// and wakes the scheduler without waiting.
type pushEngine struct {
	h      *Hub
	pusher hub.Pusher
	allow  notify.Allowlist

	mu         sync.Mutex
	devices    map[string]hub.PushDevice
	deliveries map[hub.PushDeliveryKey]hub.PushDelivery
	unsent     map[hub.PushDeliveryKey]struct{} // the deliveries not settled, which the scheduler steps
	pins       map[string]int                   // workspaces an enrollment in progress waits for (reconcile keeps them)
	cursors    map[string]string
	presence   *notify.Presences
	observers  map[string]*observer // by workspace id
	sending    map[hub.PushDeliveryKey]bool
	tests      map[string]testSend // the last test message per device
	timer      hub.Timer
	timerAt    time.Time
	closed     bool
	// changed is closed and replaced whenever the journal changes, for
	// whoever waits for a change (journalChanged).
	changed chan struct{}

	wake chan struct{} // one pending wake-up of the scheduler
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup // the scheduler, the observers and the sends
}

// testSend is the last "send a test" of a device: its payload id, for
// the acknowledgement, and when, for the rate limit.
type testSend struct {
	id string
	at time.Time
}

func newPushEngine(h *Hub, pusher hub.Pusher, allow notify.Allowlist) *pushEngine {
	e := &pushEngine{h: h, pusher: pusher, allow: allow, devices: map[string]hub.PushDevice{},
		deliveries: map[hub.PushDeliveryKey]hub.PushDelivery{}, unsent: map[hub.PushDeliveryKey]struct{}{},
		pins: map[string]int{}, cursors: map[string]string{},
		presence: notify.NewPresences(h.clock.Now()), observers: map[string]*observer{},
		sending: map[hub.PushDeliveryKey]bool{}, tests: map[string]testSend{}, wake: make(chan struct{}, 1)}
	e.ctx, e.stop = context.WithCancel(context.Background())
	return e
}

// load reads the devices, the journal and the cursors, brings the
// devices' cutoffs up to date with the registry, and starts the
// scheduler. The Hub calls it once, in Recover, before any session starts.
func (e *pushEngine) load(ctx context.Context) error {
	var devices []hub.PushDevice
	var journal []hub.PushDelivery
	var cursors map[string]string
	if err := e.h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		if devices, err = tx.PushDevices(); err != nil {
			return err
		}
		if journal, err = tx.PushDeliveries(); err != nil {
			return err
		}
		cursors, err = tx.NotificationCursors()
		return err
	}); err != nil {
		return err
	}
	e.mu.Lock()
	for _, d := range devices {
		e.devices[d.ID] = d
	}
	for _, d := range journal {
		e.putDeliveryLocked(d)
	}
	e.cursors = cursors
	e.mu.Unlock()
	if err := e.restamp(ctx); err != nil {
		return err
	}
	e.wg.Add(1)
	go e.schedule()
	e.kick() // what the last run left unsent
	return nil
}

// close ends the observers, the scheduler and the sends, and waits for
// them. What is unsent stays journaled for the next start.
func (e *pushEngine) close() {
	e.mu.Lock()
	e.closed = true
	if e.timer != nil {
		e.timer.Stop()
	}
	for _, o := range e.observers {
		o.cancel()
	}
	e.mu.Unlock()
	e.stop()
	e.wg.Wait()
}

// restamp gives every device a cutoff for each workspace it newly covers
// (one registered after an all-workspaces enrollment) and drops those of
// workspaces gone, through the commit path; then it reconciles the
// observers.
func (e *pushEngine) restamp(ctx context.Context) error {
	registered, err := e.registeredIDs(ctx)
	if err != nil {
		return err
	}
	now := e.h.clock.Now()
	e.mu.Lock()
	var changed []hub.PushDevice
	for _, d := range e.sortedDevices() {
		if nd, ok := notify.Restamp(d, registered, now); ok {
			changed = append(changed, nd)
		}
	}
	e.mu.Unlock()
	if len(changed) > 0 {
		if err := e.h.commit(ctx, func(w *writes) error {
			for _, d := range changed {
				if err := w.PutPushDevice(d); err != nil && hub.KindOf(err) != hub.NotFound {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	e.reconcile()
	return nil
}

// registeredIDs returns the ids of the registry, in registration order.
func (e *pushEngine) registeredIDs(ctx context.Context) ([]string, error) {
	ws, err := e.h.registry(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	return ids, nil
}

// sortedDevices returns the devices in creation order. e.mu is held.
func (e *pushEngine) sortedDevices() []hub.PushDevice {
	out := make([]hub.PushDevice, 0, len(e.devices))
	for _, d := range e.devices {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b hub.PushDevice) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return compareStrings(a.ID, b.ID)
	})
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sessionActive reports whether the login digest d is an active device
// session, from memory.
func (e *pushEngine) sessionActive(ctx context.Context, d hub.DeviceSessionDigest) bool {
	_, err := e.h.auth.lookup(ctx, d)
	return err == nil
}

// watched returns the workspaces whose feeds are to be observed: every
// registered workspace that an enabled device, enrolled under a login
// still active, covers — plus extra (an enrollment about to be saved).
func (e *pushEngine) watched(ctx context.Context, registered []string, extra []string) map[string]bool {
	e.mu.Lock()
	devices := e.sortedDevices()
	e.mu.Unlock()
	out := map[string]bool{}
	for _, ws := range extra {
		out[ws] = true
	}
	e.mu.Lock()
	for ws := range e.pins {
		out[ws] = true
	}
	e.mu.Unlock()
	for _, d := range devices {
		if (!d.NeedsAnswer && !d.Completed) || !e.sessionActive(ctx, d.DeviceSession) {
			continue
		}
		for _, ws := range notify.Covered(d, registered) {
			out[ws] = true
		}
	}
	return out
}

// presenceChanged is the live broker's Presence hook: a stream of user
// on ws opened or ended. It runs under the broker's lock: it only counts
// and wakes the scheduler.
func (e *pushEngine) presenceChanged(user, ws string, open bool) {
	e.mu.Lock()
	if open {
		e.presence.Arrive(user, ws)
	} else {
		e.presence.Leave(user, ws, e.h.clock.Now())
	}
	e.mu.Unlock()
	e.kick()
}

// kick wakes the scheduler, without waiting.
func (e *pushEngine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// changedDevices follows a change of the devices: the observers.
func (e *pushEngine) changedDevices() {
	e.reconcile()
	e.kick()
}

// changedRegistry follows a change of the registry: the devices' cutoffs
// (a workspace registered is covered by all-workspaces devices from now
// on), then the observers.
func (e *pushEngine) changedRegistry() {
	if err := e.restamp(e.ctx); err != nil && e.ctx.Err() == nil {
		e.h.log.Warn("notifications: the devices' cutoffs could not be brought up to date", "err", err)
	}
}

// announce journals an occurrence the Hub itself makes (a held credential
// use) as a feed event of workspace ws would be.
func (e *pushEngine) announce(ws string, n hub.Notification) {
	if err := e.ingest(e.ctx, ws, hub.NotificationFrame{Type: hub.NoticeEvent, Notification: n}); err != nil && e.ctx.Err() == nil {
		e.h.log.Warn("notifications: an occurrence could not be journaled", "workspace", ws, "err", err)
	}
}

// announceResolved discards what is unsent of occurrence id of ws.
func (e *pushEngine) announceResolved(ws, id string) {
	if err := e.ingest(e.ctx, ws, hub.NotificationFrame{Type: hub.NoticeResolved, Notification: hub.Notification{ID: id}}); err != nil && e.ctx.Err() == nil {
		e.h.log.Warn("notifications: an occurrence could not be settled", "workspace", ws, "err", err)
	}
}

// journalChanged returns a channel closed at the journal's next change.
// e.mu is held.
func (e *pushEngine) journalChanged() <-chan struct{} {
	if e.changed == nil {
		e.changed = make(chan struct{})
	}
	return e.changed
}

// noteJournalLocked wakes whoever waits for a change of the journal. e.mu
// is held.
func (e *pushEngine) noteJournalLocked() {
	if e.changed != nil {
		close(e.changed)
		e.changed = nil
	}
}

// putDeliveryLocked keeps d, and whether it is unsent. e.mu is held.
func (e *pushEngine) putDeliveryLocked(d hub.PushDelivery) {
	e.deliveries[d.Key] = d
	if d.State.Settled() {
		delete(e.unsent, d.Key)
	} else {
		e.unsent[d.Key] = struct{}{}
	}
}

// dropDeliveryLocked forgets the delivery with key k. e.mu is held.
func (e *pushEngine) dropDeliveryLocked(k hub.PushDeliveryKey) {
	delete(e.deliveries, k)
	delete(e.unsent, k)
}

// pin keeps the observers of wss while an enrollment waits for them and
// saves its device; the returned func lets them go.
func (e *pushEngine) pin(wss []string) (unpin func()) {
	e.mu.Lock()
	for _, ws := range wss {
		e.pins[ws]++
	}
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		for _, ws := range wss {
			if e.pins[ws]--; e.pins[ws] <= 0 {
				delete(e.pins, ws)
			}
		}
		e.mu.Unlock()
	}
}
