package service

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// The scheduler and the sends. One goroutine steps every unsent delivery
// (notify.Step) whenever something may have changed — a commit, a
// presence, a timer of the Clock — journals what the step changed, and
// hands what is due to at most notify.MaxSends sends. A send checks again
// that its device, its login and its workspace still stand, sends, and
// journals the answer.

// schedule runs the scheduler until the engine closes.
func (e *pushEngine) schedule() {
	defer e.wg.Done()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-e.wake:
		}
		e.step(e.ctx)
	}
}

// step runs one round of the scheduler.
func (e *pushEngine) step(ctx context.Context) {
	now := e.h.clock.Now()
	e.mu.Lock()
	keys := make([]hub.PushDeliveryKey, 0, len(e.unsent))
	for k := range e.unsent {
		if !e.sending[k] {
			keys = append(keys, k)
		}
	}
	// Oldest first, so the sends' budget goes to what waited longest.
	slices.SortFunc(keys, func(a, b hub.PushDeliveryKey) int {
		return e.deliveries[a].CreatedAt.Compare(e.deliveries[b].CreatedAt)
	})
	var changed []hub.PushDelivery
	var due []hub.PushDelivery
	var wake time.Time
	soonest := func(t time.Time) {
		if !t.IsZero() && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	for _, k := range keys {
		d := e.deliveries[k]
		dev, ok := e.devices[k.DeviceID]
		if !ok {
			continue // its removal is being committed
		}
		p, until := e.presence.At(dev.User, k.WorkspaceID, now)
		soonest(until)
		dec := notify.Step(d, p, now)
		if dec.Changed {
			changed = append(changed, dec.Delivery)
		}
		switch dec.Action {
		case notify.Wait:
			soonest(dec.Wake)
		case notify.Send:
			if len(e.sending) < notify.MaxSends {
				e.sending[k] = true
				due = append(due, dec.Delivery)
			}
		}
	}
	e.armLocked(wake)
	e.mu.Unlock()
	if len(changed) > 0 {
		if err := e.h.commit(ctx, func(w *writes) error {
			for _, d := range changed {
				if err := w.PutPushDelivery(d); err != nil && hub.KindOf(err) != hub.NotFound {
					return err
				}
			}
			return nil
		}); err != nil {
			e.release(due...)
			e.h.log.Warn("notifications: a delivery's step could not be journaled", "err", err)
			return
		}
	}
	for _, d := range due {
		e.wg.Add(1)
		go e.send(d)
	}
}

// armLocked arranges for the scheduler to run again at t (zero: no
// timer). e.mu is held.
func (e *pushEngine) armLocked(t time.Time) {
	if e.timer != nil && e.timerAt.Equal(t) {
		return
	}
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
	e.timerAt = t
	if t.IsZero() || e.closed {
		return
	}
	d := t.Sub(e.h.clock.Now())
	if d <= 0 { // the clock moved past it while the round ran
		e.timerAt = time.Time{}
		e.kick()
		return
	}
	e.timer = e.h.clock.AfterFunc(d, e.kick)
}

// release ends the sends of ds and wakes the scheduler.
func (e *pushEngine) release(ds ...hub.PushDelivery) {
	e.mu.Lock()
	for _, d := range ds {
		delete(e.sending, d.Key)
	}
	e.mu.Unlock()
	e.kick()
}

// send makes one attempt at d and journals its answer.
func (e *pushEngine) send(d hub.PushDelivery) {
	defer e.wg.Done()
	defer e.release(d)
	ctx := e.ctx
	dev, ws, ok := e.stillStands(ctx, d)
	if !ok {
		now := e.h.clock.Now()
		d.State, d.SettledAt = hub.DeliveryDiscarded, now
		e.journal(ctx, d, nil)
		return
	}
	payload, err := json.Marshal(notify.PayloadOf(d, ws.DisplayName))
	if err != nil {
		e.h.log.Error("notifications: a payload could not be encoded", "err", err)
		return
	}
	now := e.h.clock.Now()
	res, err := e.push(ctx, dev, payload, notify.TTL(d, now), notify.PayloadID(d.Key)[:32])
	if ctx.Err() != nil {
		return // closing: the attempt's answer is unknown, and it stays unsent
	}
	now = e.h.clock.Now()
	next, gone := notify.Sent(d, notify.Answer{Result: res, Err: err}, now)
	if err != nil || res.Outcome != hub.PushAccepted {
		e.h.counters.pushFailed.Add(1)
	}
	if err != nil {
		e.h.log.Warn("notifications: a push could not be sent; it will be retried", "workspace", d.Key.WorkspaceID, "err", err)
	}
	e.journal(ctx, next, func(w *writes) error {
		switch {
		case gone:
			// Only if the device was not enrolled again meanwhile with a
			// new subscription.
			cur, ok := e.device(dev.ID)
			if ok && cur.EndpointDigest == dev.EndpointDigest {
				_, err := w.DeletePushDevice(dev.ID)
				return err
			}
		case next.State == hub.DeliverySent:
			return e.touchDevice(w, dev.ID, func(d *hub.PushDevice) { d.LastSentAt = now })
		}
		return nil
	})
}

// journal commits d and what also writes.
func (e *pushEngine) journal(ctx context.Context, d hub.PushDelivery, also func(*writes) error) {
	err := e.h.commit(ctx, func(w *writes) error {
		if err := w.PutPushDelivery(d); err != nil && hub.KindOf(err) != hub.NotFound {
			return err
		}
		if also != nil {
			return also(w)
		}
		return nil
	})
	if err != nil && ctx.Err() == nil {
		e.h.log.Warn("notifications: a delivery could not be journaled", "err", err)
	}
}

// stillStands checks, at send time, that d's device exists, that the
// login it was enrolled under is still active, and that its workspace is
// registered and still covered.
func (e *pushEngine) stillStands(ctx context.Context, d hub.PushDelivery) (hub.PushDevice, hub.Workspace, bool) {
	dev, ok := e.device(d.Key.DeviceID)
	if !ok || !e.sessionActive(ctx, dev.DeviceSession) {
		return hub.PushDevice{}, hub.Workspace{}, false
	}
	all, err := e.h.registry(ctx)
	if err != nil {
		return hub.PushDevice{}, hub.Workspace{}, false
	}
	i := slices.IndexFunc(all, func(w hub.Workspace) bool { return w.ID == d.Key.WorkspaceID })
	if i < 0 {
		return hub.PushDevice{}, hub.Workspace{}, false
	}
	ids := make([]string, len(all))
	for j, w := range all {
		ids[j] = w.ID
	}
	if !slices.Contains(notify.Covered(dev, ids), d.Key.WorkspaceID) || !notify.Wants(dev, d.Notification.Kind.Category()) {
		return hub.PushDevice{}, hub.Workspace{}, false
	}
	return dev, all[i], true
}

// device returns device id as the engine knows it.
func (e *pushEngine) device(id string) (hub.PushDevice, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.devices[id]
	return d, ok
}

// touchDevice rewrites device id with fn applied, if it still exists.
func (e *pushEngine) touchDevice(w *writes, id string, fn func(*hub.PushDevice)) error {
	d, ok := e.device(id)
	if !ok {
		return nil
	}
	fn(&d)
	if err := w.PutPushDevice(d); err != nil && hub.KindOf(err) != hub.NotFound {
		return err
	}
	return nil
}

// push opens dev's sealed subscription and sends payload to it.
func (e *pushEngine) push(ctx context.Context, dev hub.PushDevice, payload []byte, ttl time.Duration, topic string) (hub.PushResult, error) {
	sub, err := e.openSubscription(dev)
	if err != nil {
		return hub.PushResult{}, err
	}
	return e.pusher.Push(ctx, sub, hub.PushMessage{Payload: payload, TTL: ttl, Urgency: "normal", Topic: topic})
}

// sealedSubscription is how a subscription is sealed in the store.
type sealedSubscription struct {
	Endpoint string `json:"endpoint"`
	P256DH   []byte `json:"p256dh"`
	Auth     []byte `json:"auth"`
}

func (e *pushEngine) sealSubscription(s hub.PushSubscription) ([]byte, error) {
	b, err := json.Marshal(sealedSubscription{Endpoint: s.Endpoint, P256DH: s.P256DH, Auth: s.Auth})
	if err != nil {
		return nil, err
	}
	defer clear(b)
	return e.h.vault.SealToken(b)
}

func (e *pushEngine) openSubscription(dev hub.PushDevice) (hub.PushSubscription, error) {
	b, err := e.h.vault.OpenToken(dev.Subscription)
	if err != nil {
		return hub.PushSubscription{}, hub.Wrap(hub.Internal, err, "a device's subscription could not be opened")
	}
	defer clear(b)
	var s sealedSubscription
	if err := json.Unmarshal(b, &s); err != nil {
		return hub.PushSubscription{}, hub.Wrap(hub.Internal, err, "a device's subscription could not be read")
	}
	return hub.PushSubscription{Endpoint: s.Endpoint, P256DH: s.P256DH, Auth: s.Auth}, nil
}
