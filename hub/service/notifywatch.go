package service

import (
	"context"
	"slices"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// The observers: one per running workspace that a device covers, shared
// by every device, reading the session's notification feed from the
// cursor the store kept. An observer never starts a session or an agent:
// it follows what runs, and reconcile ends it when the session ends or
// no device covers the workspace any more.

// observer follows one session's notification feed.
type observer struct {
	ws     string
	rs     hub.WorkspaceSession
	cancel context.CancelFunc
	// caught is closed once the feed has been read up to the session's
	// present (its first ready): what an enrollment waits for.
	caught chan struct{}
}

// Backoff of an observer's reconnects: min(1 s·2^min(failures,4), 15 s).
func observerBackoff(failures int) time.Duration {
	return min(time.Second<<min(failures, 4), 15*time.Second)
}

// reconcile starts an observer for every running workspace a device
// covers and ends the others.
func (e *pushEngine) reconcile(extra ...string) map[string]*observer {
	ctx := e.ctx
	registered, err := e.registeredIDs(ctx)
	if err != nil {
		e.h.log.Warn("notifications: the registry could not be read", "err", err)
		return nil
	}
	want := e.watched(ctx, registered, extra)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	out := map[string]*observer{}
	for ws, o := range e.observers {
		rw := e.h.workspaceSession(ws)
		// want was computed before e.mu was taken: an enrollment that
		// pinned ws since then waits for this observer, so the pin, read
		// now under e.mu, keeps it.
		if (want[ws] || e.pins[ws] > 0) && rw != nil && rw.rs == o.rs {
			out[ws] = o
			continue
		}
		o.cancel()
		delete(e.observers, ws)
	}
	for ws := range want {
		if e.observers[ws] != nil {
			continue
		}
		rw := e.h.workspaceSession(ws)
		if rw == nil {
			continue
		}
		octx, cancel := context.WithCancel(e.ctx)
		o := &observer{ws: ws, rs: rw.rs, cancel: cancel, caught: make(chan struct{})}
		e.observers[ws] = o
		out[ws] = o
		e.wg.Add(1)
		go e.observe(octx, o)
	}
	return out
}

// observe reads o's feed until ctx ends, reconnecting with backoff from
// the stored cursor.
func (e *pushEngine) observe(ctx context.Context, o *observer) {
	defer e.wg.Done()
	failures := 0
	for ctx.Err() == nil {
		e.mu.Lock()
		cursor := e.cursors[o.ws]
		e.mu.Unlock()
		feed, err := o.rs.OpenNotifications(ctx, cursor)
		caught := false
		if err == nil {
			caught = e.follow(ctx, o, feed)
			feed.Close()
		}
		if ctx.Err() != nil {
			return
		}
		select {
		case <-o.rs.Done():
			return // the session ended: reconcile drops the observer
		default:
		}
		// A feed that had caught up is reopened at once, from its cursor;
		// one that failed before waits, longer each time.
		if caught {
			failures = 0
			continue
		}
		if !hub.Sleep(ctx, e.h.clock, observerBackoff(failures)) {
			return
		}
		failures++
	}
}

// follow ingests the frames of feed until it ends; it reports whether the
// feed caught up (so the next failure starts the backoff afresh).
func (e *pushEngine) follow(ctx context.Context, o *observer, feed hub.NotificationFeed) (caught bool) {
	for {
		f, err := feed.Next(ctx)
		if err != nil {
			return caught
		}
		if err := e.ingest(ctx, o.ws, f); err != nil {
			e.h.log.Warn("notifications: a feed frame could not be journaled", "workspace", o.ws, "err", err)
			return caught
		}
		if f.Type == hub.NoticeReady && !caught {
			caught = true
			select {
			case <-o.caught:
			default:
				close(o.caught)
			}
		}
	}
}

// ingest journals what one frame means for every device: a new
// occurrence becomes a delivery for each device it is eligible for
// (never a second one for the same device), a resolved one discards the
// unsent deliveries of it, a snapshot discards the unsent needsAnswer
// deliveries that no longer wait; the cursor is stored with them.
func (e *pushEngine) ingest(ctx context.Context, ws string, f hub.NotificationFrame) error {
	registered, err := e.registeredIDs(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(registered, ws) {
		return nil
	}
	now := e.h.clock.Now()
	var add []hub.Notification
	var gone func(hub.PushDelivery) bool
	switch f.Type {
	case hub.NoticeSnapshot:
		add = f.Pending
		gone = func(d hub.PushDelivery) bool {
			return d.Notification.Kind.Category() == hub.CategoryNeedsAnswer &&
				!slices.ContainsFunc(f.Pending, func(n hub.Notification) bool { return n.ID == d.Key.NotificationID })
		}
	case hub.NoticeEvent:
		add = []hub.Notification{f.Notification}
	case hub.NoticeResolved:
		gone = func(d hub.PushDelivery) bool { return d.Key.NotificationID == f.Notification.ID }
	}
	e.mu.Lock()
	var puts []hub.PushDelivery
	for k := range e.unsent {
		d := e.deliveries[k]
		if d.Key.WorkspaceID == ws && gone != nil && gone(d) && !e.sending[d.Key] {
			d.State, d.SettledAt = hub.DeliveryDiscarded, now
			puts = append(puts, d)
		}
	}
	var fresh []hub.PushDelivery
	for _, n := range add {
		for _, dev := range e.sortedDevices() {
			key := hub.PushDeliveryKey{WorkspaceID: ws, DeviceID: dev.ID, NotificationID: n.ID}
			if _, seen := e.deliveries[key]; seen || !notify.Eligible(dev, ws, registered, n) {
				continue
			}
			fresh = append(fresh, notify.New(key, n, now))
		}
	}
	var journal []hub.PushDelivery
	if len(fresh) > 0 { // pruned as it grows
		journal = make([]hub.PushDelivery, 0, len(e.deliveries))
		for _, d := range e.deliveries {
			journal = append(journal, d)
		}
	}
	cursorChanged := f.Cursor != "" && e.cursors[ws] != f.Cursor
	e.mu.Unlock()
	if len(journal)+len(fresh) > notify.MaxJournal { // the order only matters to evict
		slices.SortFunc(journal, func(a, b hub.PushDelivery) int { return a.CreatedAt.Compare(b.CreatedAt) })
	}
	drop, room := notify.Prune(journal, now, len(fresh))
	if !room {
		e.h.log.Warn("notifications: the delivery journal is full of unsent deliveries; new ones are dropped", "dropped", len(fresh))
		fresh = nil
	}
	if len(puts) == 0 && len(fresh) == 0 && len(drop) == 0 && !cursorChanged {
		return nil
	}
	return e.h.commit(ctx, func(w *writes) error {
		for _, k := range drop {
			if err := w.DeletePushDelivery(k); err != nil {
				return err
			}
		}
		for _, d := range append(puts, fresh...) {
			if err := w.PutPushDelivery(d); err != nil && hub.KindOf(err) != hub.NotFound {
				return err // NotFound: the device was removed meanwhile
			}
		}
		if cursorChanged {
			return w.PutNotificationCursor(ws, f.Cursor)
		}
		return nil
	})
}
