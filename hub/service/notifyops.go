package service

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/notify"
)

// The notification operations: read, enroll, remove, and Wharf's
// acknowledgement and test.

// Bounds of the operations.
const (
	// feedWait bounds how long an enrollment waits for the feed of each
	// running covered workspace to catch up.
	feedWait = 3 * time.Second
	// enrollRounds bounds how often an all-workspaces enrollment
	// re-evaluates what it covers while the registry changes.
	enrollRounds = 3
	// testInterval is the least time between two tests of a device.
	testInterval = 10 * time.Second
)

// notConfigured is the 503 of an enrollment or a test on a Hub without a
// push contact: it says what the operator sets.
func notConfigured() error {
	return &hub.Error{Kind: hub.Unavailable, Message: hub.MsgPushNotConfigured}
}

// Notifications returns push support and caller's device id ("" or not
// the caller's: no device).
func (h *Hub) Notifications(ctx context.Context, caller hub.DeviceSession, device string) (hub.NotificationState, error) {
	if err := notify.CheckDeviceQuery(device, false); err != nil {
		return hub.NotificationState{}, err
	}
	st := hub.NotificationState{Configured: h.push.pusher.Configured()}
	if st.Configured {
		st.PublicKey = h.push.pusher.PublicKey()
	}
	if device == "" {
		return st, nil
	}
	d, ok := h.push.device(device)
	if !ok || d.User != caller.User {
		return st, nil
	}
	registered, err := h.push.registeredIDs(ctx)
	if err != nil {
		return hub.NotificationState{}, err
	}
	st.Device = deviceView(d, caller, registered)
	return st, nil
}

func deviceView(d hub.PushDevice, caller hub.DeviceSession, registered []string) *hub.NotificationDeviceView {
	return &hub.NotificationDeviceView{ID: d.ID, AllWorkspaces: d.AllWorkspaces, NeedsAnswer: d.NeedsAnswer, Completed: d.Completed,
		WorkspaceIDs: slices.Clone(d.WorkspaceIDs), LastSentAt: d.LastSentAt, LastAcknowledgedAt: d.LastAckAt,
		Active: d.DeviceSession == caller.Digest && len(notify.Covered(d, registered)) > 0}
}

// EnrollNotifications enrolls the caller's device, or updates it (found
// by id or by its subscription's endpoint), once the feed of every
// running workspace it covers has caught up, so what happened before is
// history.
func (h *Hub) EnrollNotifications(ctx context.Context, caller hub.DeviceSession, raw notify.RawEnrollment) (hub.NotificationState, error) {
	e := h.push
	if !e.pusher.Configured() {
		return hub.NotificationState{}, notConfigured()
	}
	registered, err := e.registeredIDs(ctx)
	if err != nil {
		return hub.NotificationState{}, err
	}
	in, err := notify.ParseEnrollment(raw, e.allow, func(id string) bool { return slices.Contains(registered, id) })
	if err != nil {
		return hub.NotificationState{}, err
	}
	digest := sha256.Sum256([]byte(in.Subscription.Endpoint))
	sealed, err := e.sealSubscription(in.Subscription)
	if err != nil {
		return hub.NotificationState{}, hub.Wrap(hub.Internal, err, "the subscription could not be sealed")
	}
	for round := 1; ; round++ {
		covered := notify.Covered(hub.PushDevice{WorkspaceIDs: in.WorkspaceIDs, AllWorkspaces: in.AllWorkspaces}, registered)
		// The observers this enrollment waits for are kept until its
		// device is saved (and covers them) or it fails, whatever other
		// enrollments reconcile meanwhile.
		unpin := e.pin(covered)
		defer unpin()
		if err := e.awaitFeeds(ctx, covered); err != nil {
			return hub.NotificationState{}, err
		}
		now, err := e.registeredIDs(ctx)
		if err != nil {
			return hub.NotificationState{}, err
		}
		if slices.Equal(now, registered) || !in.AllWorkspaces {
			registered = now
			break
		}
		if round == enrollRounds {
			return hub.NotificationState{}, hub.Errorf(hub.Unavailable, "workspaces kept changing during enrollment; try again")
		}
		registered = now
	}
	// Which of the caller's devices are active, read before the
	// transaction (it must not wait on anything but the store).
	active := map[string]bool{}
	e.mu.Lock()
	mine := e.sortedDevices()
	e.mu.Unlock()
	for _, d := range mine {
		if d.User == caller.User {
			active[d.ID] = e.sessionActive(ctx, d.DeviceSession) && len(notify.Covered(d, registered)) > 0
		}
	}
	var saved hub.PushDevice
	err = h.commit(ctx, func(w *writes) error {
		// The engine's copy of the devices is the store's while commitMu
		// is held: no need to read every device in the transaction.
		e.mu.Lock()
		devices := e.sortedDevices()
		e.mu.Unlock()
		old, err := matchDevice(devices, in.ID, digest, caller.User)
		if err != nil {
			return err
		}
		id := uuid.NewString()
		if old != nil {
			id = old.ID
		} else if err := makeRoom(w, devices, caller.User, active); err != nil {
			return err
		}
		saved = notify.Enroll(old, in, id, caller.User, caller.Digest, registered, h.clock.Now())
		saved.Subscription, saved.EndpointDigest = sealed, digest
		if err := w.PutPushDevice(saved); err != nil {
			return err
		}
		return e.discardIneligible(w, old, saved, registered)
	})
	if err != nil {
		return hub.NotificationState{}, err
	}
	return hub.NotificationState{Configured: true, PublicKey: e.pusher.PublicKey(), Device: deviceView(saved, caller, registered)}, nil
}

// matchDevice finds the device an enrollment updates: the one with its
// id, or the one enrolled with its endpoint. Either belonging to another
// user, or the two being different devices, is a Conflict.
func matchDevice(devices []hub.PushDevice, id string, digest [sha256.Size]byte, user string) (*hub.PushDevice, error) {
	var byID, byEndpoint *hub.PushDevice
	for i := range devices {
		if id != "" && devices[i].ID == id {
			byID = &devices[i]
		}
		if devices[i].EndpointDigest == digest {
			byEndpoint = &devices[i]
		}
	}
	for _, d := range []*hub.PushDevice{byID, byEndpoint} {
		if d != nil && d.User != user {
			return nil, hub.Errorf(hub.Conflict, "subscription belongs to another account; renew it on this device")
		}
	}
	if byID != nil && byEndpoint != nil && byID.ID != byEndpoint.ID {
		return nil, hub.Errorf(hub.Conflict, "subscription is already enrolled")
	}
	if byID != nil {
		return byID, nil
	}
	return byEndpoint, nil
}

// makeRoom lets user enroll one more device: beyond the limit, the user's
// inactive devices (their login ended, or they cover nothing) are
// removed first; if that is not enough, the limit is a Conflict.
func makeRoom(w *writes, devices []hub.PushDevice, user string, active map[string]bool) error {
	var mine []hub.PushDevice
	for _, d := range devices {
		if d.User == user {
			mine = append(mine, d)
		}
	}
	if len(mine) < notify.MaxDevicesOfUser {
		return nil
	}
	n := len(mine)
	for _, d := range mine {
		if a, ok := active[d.ID]; !ok || a { // one enrolled meanwhile counts as active
			continue
		}
		if _, err := w.DeletePushDevice(d.ID); err != nil {
			return err
		}
		n--
	}
	if n >= notify.MaxDevicesOfUser {
		return hub.Errorf(hub.Conflict, "device limit reached")
	}
	return nil
}

// discardIneligible settles the unsent deliveries of a re-enrolled device
// that it is no longer to receive: all of them when its login changed.
func (e *pushEngine) discardIneligible(w *writes, old *hub.PushDevice, d hub.PushDevice, registered []string) error {
	if old == nil {
		return nil
	}
	now := e.h.clock.Now()
	e.mu.Lock()
	var drop []hub.PushDelivery
	for k, x := range e.deliveries {
		if k.DeviceID != d.ID || x.State.Settled() {
			continue
		}
		if old.DeviceSession != d.DeviceSession || !notify.Eligible(d, k.WorkspaceID, registered, x.Notification) {
			x.State, x.SettledAt = hub.DeliveryDiscarded, now
			drop = append(drop, x)
		}
	}
	e.mu.Unlock()
	for _, x := range drop {
		if err := w.PutPushDelivery(x); err != nil {
			return err
		}
	}
	return nil
}

// awaitFeeds makes sure the feed of every running workspace of covered is
// observed and has caught up, waiting feedWait at most; the workspaces
// whose feeds did not answer make an Unavailable error naming them.
func (e *pushEngine) awaitFeeds(ctx context.Context, covered []string) error {
	var running []string
	for _, ws := range covered {
		if e.h.workspaceSession(ws) != nil {
			running = append(running, ws)
		}
	}
	if len(running) == 0 {
		return nil
	}
	observers := e.reconcile(running...)
	expired := make(chan struct{})
	t := e.h.clock.AfterFunc(feedWait, func() { close(expired) })
	defer t.Stop()
	var late []string
	for _, ws := range running {
		o := observers[ws]
		if o == nil {
			continue // it stopped meanwhile: nothing to wait for
		}
		select {
		case <-o.caught:
		case <-expired:
			late = append(late, ws)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if len(late) == 0 {
		return nil
	}
	all, err := e.h.registry(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(late))
	for _, ws := range late {
		name := ws
		if i := slices.IndexFunc(all, func(w hub.Workspace) bool { return w.ID == ws }); i >= 0 {
			name = all[i].DisplayName
		}
		names = append(names, name)
	}
	return hub.Errorf(hub.Unavailable, "notification feed for %s did not answer; try again", strings.Join(names, ", "))
}

// RemoveNotifications removes one of the caller's devices and what it
// had yet to receive.
func (h *Hub) RemoveNotifications(ctx context.Context, caller hub.DeviceSession, device string) error {
	if err := notify.CheckDeviceQuery(device, true); err != nil {
		return err
	}
	return h.commit(ctx, func(w *writes) error {
		d, ok := h.push.device(device)
		if !ok || d.User != caller.User {
			return hub.Errorf(hub.NotFound, "notification device not found")
		}
		removed, err := w.DeletePushDevice(device)
		if err == nil && !removed {
			return hub.Errorf(hub.NotFound, "notification device not found")
		}
		return err
	})
}

// AcknowledgeNotification records that the caller's device showed the
// push message with payload id: one of its deliveries in the journal's
// retention, whatever its state (a device may show a push before the
// Hub has journaled the service's answer, or after a kill cut it), or
// its last test.
func (h *Hub) AcknowledgeNotification(ctx context.Context, caller hub.DeviceSession, device, id string) error {
	if err := notify.CheckDeviceQuery(device, true); err != nil {
		return err
	}
	e := h.push
	e.mu.Lock()
	d, ok := e.devices[device]
	known := ok && e.tests[device].id == id && id != ""
	if ok && !known {
		for k := range e.deliveries {
			if k.DeviceID == device && notify.PayloadID(k) == id {
				known = true
				break
			}
		}
	}
	e.mu.Unlock()
	if !ok || d.User != caller.User {
		return hub.Errorf(hub.NotFound, "notification device not found")
	}
	if !known {
		return hub.Errorf(hub.NotFound, "notification not found")
	}
	return h.commit(ctx, func(w *writes) error {
		return e.touchDevice(w, device, func(d *hub.PushDevice) { d.LastAckAt = h.clock.Now() })
	})
}

// TestNotification queues a test message to the caller's device,
// enrolled under the caller's login; the send runs in the background.
func (h *Hub) TestNotification(ctx context.Context, caller hub.DeviceSession, device string) error {
	if err := notify.CheckDeviceQuery(device, true); err != nil {
		return err
	}
	e := h.push
	if !e.pusher.Configured() {
		return notConfigured()
	}
	now := h.clock.Now()
	key := hub.PushDeliveryKey{DeviceID: device, NotificationID: "test:" + uuid.NewString()}
	e.mu.Lock()
	d, ok := e.devices[device]
	if !ok || d.User != caller.User || d.DeviceSession != caller.Digest {
		e.mu.Unlock()
		return hub.Errorf(hub.NotFound, "notification device not found")
	}
	if last := e.tests[device]; !last.at.IsZero() && now.Sub(last.at) < testInterval {
		e.mu.Unlock()
		return hub.Errorf(hub.RateLimited, "a test was sent a moment ago; wait a few seconds before sending another")
	}
	e.tests[device] = testSend{id: notify.PayloadID(key), at: now}
	if e.closed {
		e.mu.Unlock()
		return hub.Errorf(hub.Unavailable, "the Hub is shutting down")
	}
	e.wg.Add(1)
	e.mu.Unlock()
	go e.sendTest(d, hub.PushDelivery{Key: key, Notification: hub.Notification{ID: key.NotificationID, CreatedAt: now},
		Deadline: now.Add(notify.SendWindow)})
	return nil
}

// sendTest sends a test message once; its answer shows as the device's
// last send.
func (e *pushEngine) sendTest(dev hub.PushDevice, d hub.PushDelivery) {
	defer e.wg.Done()
	payload, err := json.Marshal(notify.PayloadOf(d, "Wharf"))
	if err != nil {
		return
	}
	res, err := e.push(e.ctx, dev, payload, notify.TTL(d, e.h.clock.Now()), "")
	if err != nil || res.Outcome != hub.PushAccepted {
		e.h.log.Warn("notifications: a test message was not accepted", "status", res.Status, "err", err)
		return
	}
	now := e.h.clock.Now()
	_ = e.h.commit(e.ctx, func(w *writes) error {
		return e.touchDevice(w, dev.ID, func(d *hub.PushDevice) { d.LastSentAt = now })
	})
}
