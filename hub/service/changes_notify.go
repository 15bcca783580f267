package service

import (
	"context"
	"slices"

	"github.com/wharfhub/wharf/hub"
)

// The consequences of the notifications family's writes (writes.go): a
// device saved or removed, a delivery journaled or dropped, a feed's
// cursor stored, and what the registry's and the users' own writes mean
// for them. Each brings the engine's copy of the store up to date; none
// is shown in the Hub state. A device change reconciles the observers; a
// delivery change wakes the scheduler.

// pushDeviceSaved is a device enrolled or changed; covers says whether
// what it covers may have changed (set by apply: a device's last send or
// acknowledgement changes nothing the observers depend on).
type pushDeviceSaved struct {
	d      hub.PushDevice
	covers bool
}

func (c *pushDeviceSaved) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	old, ok := h.push.devices[c.d.ID]
	c.covers = !ok || old.DeviceSession != c.d.DeviceSession || old.AllWorkspaces != c.d.AllWorkspaces ||
		old.NeedsAnswer != c.d.NeedsAnswer || old.Completed != c.d.Completed || !slices.Equal(old.WorkspaceIDs, c.d.WorkspaceIDs)
	h.push.devices[c.d.ID] = c.d
	h.push.mu.Unlock()
	return true, false
}

func (c *pushDeviceSaved) publish(_ context.Context, h *Hub, _ *publication) {
	if c.covers {
		h.push.changedDevices()
	}
}

type pushDeviceRemoved struct{ id string }

func (c pushDeviceRemoved) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	delete(h.push.devices, c.id)
	for k := range h.push.deliveries {
		if k.DeviceID == c.id {
			h.push.dropDeliveryLocked(k)
		}
	}
	delete(h.push.tests, c.id)
	h.push.noteJournalLocked()
	h.push.mu.Unlock()
	return true, false
}

func (pushDeviceRemoved) publish(_ context.Context, h *Hub, _ *publication) { h.push.changedDevices() }

type pushDeliverySaved struct{ d hub.PushDelivery }

func (c pushDeliverySaved) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	if old, ok := h.push.deliveries[c.d.Key]; !ok || !old.State.Settled() {
		// Settled now, and not before: counted once, as it commits.
		switch c.d.State {
		case hub.DeliverySent:
			h.counters.pushSent.Add(1)
		case hub.DeliveryDiscarded:
			h.counters.pushDiscarded.Add(1)
		}
	}
	h.push.putDeliveryLocked(c.d)
	h.push.noteJournalLocked()
	h.push.mu.Unlock()
	return true, false
}

func (pushDeliverySaved) publish(_ context.Context, h *Hub, _ *publication) { h.push.kick() }

type pushDeliveryDeleted struct{ k hub.PushDeliveryKey }

func (c pushDeliveryDeleted) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	h.push.dropDeliveryLocked(c.k)
	h.push.noteJournalLocked()
	h.push.mu.Unlock()
	return true, false
}

func (pushDeliveryDeleted) publish(context.Context, *Hub, *publication) {}

type notificationCursorSaved struct{ ws, cursor string }

func (c notificationCursorSaved) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	if c.cursor == "" {
		delete(h.push.cursors, c.ws)
	} else {
		h.push.cursors[c.ws] = c.cursor
	}
	h.push.mu.Unlock()
	return true, false
}

func (notificationCursorSaved) publish(context.Context, *Hub, *publication) {}

// pushWorkspaceLeft: a workspace left the registry, and the store dropped
// its deliveries and cursor with it.
type pushWorkspaceLeft struct{ ws string }

func (c pushWorkspaceLeft) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	for k := range h.push.deliveries {
		if k.WorkspaceID == c.ws {
			h.push.dropDeliveryLocked(k)
		}
	}
	delete(h.push.cursors, c.ws)
	h.push.mu.Unlock()
	return true, false
}

func (pushWorkspaceLeft) publish(ctx context.Context, h *Hub, _ *publication) {
	h.push.changedRegistry()
}

// pushWorkspaceJoined: a workspace was registered; devices that cover
// every workspace start covering it now.
type pushWorkspaceJoined struct{}

func (pushWorkspaceJoined) apply(*Hub) (took, shown bool) { return true, false }
func (pushWorkspaceJoined) publish(ctx context.Context, h *Hub, _ *publication) {
	h.push.changedRegistry()
}

// pushUserLeft: a user was removed, and the store dropped its devices
// and their deliveries with it.
type pushUserLeft struct{ user string }

func (c pushUserLeft) apply(h *Hub) (took, shown bool) {
	h.push.mu.Lock()
	for id, d := range h.push.devices {
		if d.User != c.user {
			continue
		}
		delete(h.push.devices, id)
		delete(h.push.tests, id)
		for k := range h.push.deliveries {
			if k.DeviceID == id {
				h.push.dropDeliveryLocked(k)
			}
		}
	}
	h.push.mu.Unlock()
	return true, false
}

func (pushUserLeft) publish(_ context.Context, h *Hub, _ *publication) { h.push.changedDevices() }
