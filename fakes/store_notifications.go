package fakes

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the fake store's push devices, delivery journal and
// notification-feed cursors. It keeps what the SQLite adapter keeps and
// refuses what it refuses, with the same kinds of error: a value of a
// closed set the records do not name, or a time its nanosecond columns
// cannot hold. It also gives times back as the adapter does, to the
// nanosecond in the local zone without a monotonic reading, so a caller
// tested against the fake sees what the database would give it.

// storedDelivery is one delivery as the fake keeps it, with its insertion
// number: the listing's order among equal CreatedAt.
type storedDelivery struct {
	d   hub.PushDelivery
	seq uint64
}

// unstorableNotice refuses a notification record the SQLite adapter could
// not read back, as it does.
func unstorableNotice(why error) error {
	return hub.Wrap(hub.Internal, why, "the Hub's database cannot store this notification record")
}

// The times the SQLite adapter's columns of Unix nanoseconds hold.
var (
	earliestTime = time.Unix(0, math.MinInt64)
	latestTime   = time.Unix(0, math.MaxInt64)
)

// storedTime is t as the SQLite adapter reads it back: zero stays zero,
// any other is kept to the nanosecond. It reports false for a time the
// adapter cannot hold.
func storedTime(t time.Time) (time.Time, bool) {
	if t.IsZero() {
		return time.Time{}, true
	}
	if t.Before(earliestTime) || t.After(latestTime) {
		return time.Time{}, false
	}
	return time.Unix(0, t.UnixNano()), true
}

// storedTimes replaces each of ts by storedTime's, reporting the first
// that cannot be held.
func storedTimes(ts ...*time.Time) error {
	for _, p := range ts {
		t, ok := storedTime(*p)
		if !ok {
			return fmt.Errorf("time %s is outside the times the Hub's database holds", p.UTC().Format(time.RFC3339))
		}
		*p = t
	}
	return nil
}

// clonePushDevice copies d's slices, so neither the caller nor the store
// reaches the other's; an empty list becomes nil, as the adapter reads one
// back.
func clonePushDevice(d hub.PushDevice) hub.PushDevice {
	d.Subscription = bytes.Clone(d.Subscription)
	d.WorkspaceIDs = slices.Clip(slices.Clone(d.WorkspaceIDs))
	d.Cutoffs = slices.Clip(slices.Clone(d.Cutoffs))
	if len(d.WorkspaceIDs) == 0 {
		d.WorkspaceIDs = nil
	}
	if len(d.Cutoffs) == 0 {
		d.Cutoffs = nil
	}
	return d
}

// pushDeviceIndex returns the position of device id, or -1.
func (t *tx) pushDeviceIndex(id string) int {
	return slices.IndexFunc(t.st.pushDevices, func(d hub.PushDevice) bool { return d.ID == id })
}

func (t *tx) PushDevices() ([]hub.PushDevice, error) {
	ds := make([]hub.PushDevice, len(t.st.pushDevices))
	for i, d := range t.st.pushDevices {
		ds[i] = clonePushDevice(d)
	}
	return ds, nil
}

func (t *tx) PutPushDevice(d hub.PushDevice) error {
	if err := t.write(); err != nil {
		return err
	}
	d = clonePushDevice(d)
	for _, c := range d.Cutoffs {
		if c.Category != hub.CategoryNeedsAnswer && c.Category != hub.CategoryCompleted {
			return unstorableNotice(fmt.Errorf("cutoff of push device %q: unknown notification category %q", d.ID, c.Category))
		}
	}
	times := []*time.Time{&d.CreatedAt, &d.LastSentAt, &d.LastAckAt}
	for i := range d.Cutoffs {
		times = append(times, &d.Cutoffs[i].Since) // d.Cutoffs is the clone's
	}
	if err := storedTimes(times...); err != nil {
		return unstorableNotice(fmt.Errorf("push device %q: %w", d.ID, err))
	}
	if _, ok := t.st.users[d.User]; !ok {
		return hub.Errorf(hub.NotFound, "user %q not found", d.User)
	}
	if slices.ContainsFunc(t.st.pushDevices, func(o hub.PushDevice) bool {
		return o.EndpointDigest == d.EndpointDigest && o.ID != d.ID
	}) {
		return hub.Errorf(hub.Conflict, "another device holds this push subscription")
	}
	// The slice was cloned for this transaction, so assigning an element
	// does not reach the committed state.
	if i := t.pushDeviceIndex(d.ID); i >= 0 {
		t.st.pushDevices[i] = d
	} else {
		t.st.pushDevices = append(t.st.pushDevices, d)
	}
	return nil
}

func (t *tx) DeletePushDevice(id string) (bool, error) {
	if err := t.write(); err != nil {
		return false, err
	}
	n := len(t.st.pushDevices)
	t.forgetPushDevices(func(d hub.PushDevice) bool { return d.ID == id })
	return len(t.st.pushDevices) < n, nil
}

// forgetPushDevices deletes every device match selects and the
// deliveries to it: the fake's ON DELETE CASCADE.
func (t *tx) forgetPushDevices(match func(hub.PushDevice) bool) {
	gone := map[string]bool{}
	t.st.pushDevices = slices.DeleteFunc(t.st.pushDevices, func(d hub.PushDevice) bool {
		if !match(d) {
			return false
		}
		gone[d.ID] = true
		return true
	})
	if len(gone) > 0 {
		maps.DeleteFunc(t.st.pushDeliveries, func(k hub.PushDeliveryKey, _ storedDelivery) bool { return gone[k.DeviceID] })
	}
}

// forgetWorkspaceNotices deletes the deliveries and the cursor of the
// workspace; devices keep their selection and cutoffs.
func (t *tx) forgetWorkspaceNotices(workspaceID string) {
	maps.DeleteFunc(t.st.pushDeliveries, func(k hub.PushDeliveryKey, _ storedDelivery) bool { return k.WorkspaceID == workspaceID })
	delete(t.st.notifyCursors, workspaceID)
}

func (t *tx) PushDeliveries() ([]hub.PushDelivery, error) {
	sds := slices.Collect(maps.Values(t.st.pushDeliveries))
	slices.SortFunc(sds, func(a, b storedDelivery) int {
		return cmp.Or(a.d.CreatedAt.Compare(b.d.CreatedAt), cmp.Compare(a.seq, b.seq))
	})
	ds := make([]hub.PushDelivery, len(sds))
	for i, s := range sds {
		ds[i] = s.d // a plain value: nothing in it is shared
	}
	return ds, nil
}

func (t *tx) PutPushDelivery(d hub.PushDelivery) error {
	if err := t.write(); err != nil {
		return err
	}
	switch d.State {
	case hub.DeliveryPending, hub.DeliveryHeld, hub.DeliverySent, hub.DeliveryDiscarded:
	default:
		return unstorableNotice(fmt.Errorf("delivery of %q: unknown state %q", d.Key.NotificationID, d.State))
	}
	if d.Notification.Kind.Category() == "" {
		return unstorableNotice(fmt.Errorf("delivery of %q: unknown notification kind %q", d.Key.NotificationID, d.Notification.Kind))
	}
	if err := storedTimes(&d.Notification.CreatedAt, &d.CreatedAt, &d.HeldAt, &d.ReleasedAt,
		&d.NextAt, &d.Deadline, &d.SettledAt); err != nil {
		return unstorableNotice(fmt.Errorf("delivery of %q: %w", d.Key.NotificationID, err))
	}
	if t.pushDeviceIndex(d.Key.DeviceID) < 0 {
		return hub.Errorf(hub.NotFound, "push device %q not found", d.Key.DeviceID)
	}
	if t.workspaceIndex(d.Key.WorkspaceID) < 0 {
		return hub.Errorf(hub.NotFound, "workspace %q not found", d.Key.WorkspaceID)
	}
	s, ok := t.st.pushDeliveries[d.Key]
	if !ok {
		// A new delivery comes after every existing one among equal
		// CreatedAt, as a new rowid does; a replaced one keeps its place.
		t.st.lastDelivery++
		s.seq = t.st.lastDelivery
	}
	s.d = d
	t.st.pushDeliveries[d.Key] = s
	return nil
}

func (t *tx) DeletePushDelivery(k hub.PushDeliveryKey) error {
	if err := t.write(); err != nil {
		return err
	}
	delete(t.st.pushDeliveries, k)
	return nil
}

func (t *tx) NotificationCursors() (map[string]string, error) {
	return maps.Clone(t.st.notifyCursors), nil
}

func (t *tx) PutNotificationCursor(ws, cursor string) error {
	if err := t.write(); err != nil {
		return err
	}
	if t.workspaceIndex(ws) < 0 {
		return hub.Errorf(hub.NotFound, "workspace %q not found", ws)
	}
	if cursor == "" {
		delete(t.st.notifyCursors, ws)
	} else {
		t.st.notifyCursors[ws] = cursor
	}
	return nil
}
