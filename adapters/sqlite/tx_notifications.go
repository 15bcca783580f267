package sqlite

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the push devices (migration 0007) and what they share
// with the delivery journal and the feed cursors (tx_pushjournal.go). As
// for the credentials, a value of a closed set (a delivery state, a
// notification kind, a cutoff category) is checked on the way in, so a
// write the store could not read back is refused, and again on the way
// out, so a row changed behind the Hub's back is an error rather than a
// guess. Times are stored to the nanosecond; a zero time is NULL.

// unstorableNotice refuses a notification record the store could not
// read back faithfully: the rules (hub/notify) let none through, so one
// reaching here is a bug, reported as Internal like a failure of the
// store.
func unstorableNotice(why error) error {
	return hub.Wrap(hub.Internal, why, "the Hub's database cannot store this notification record")
}

// The times a column of Unix nanoseconds holds.
var (
	earliestTime = time.Unix(0, math.MinInt64)
	latestTime   = time.Unix(0, math.MaxInt64)
)

// timeArgs binds times as nullable Unix nanoseconds: a zero time as NULL,
// so it reads back zero. A time outside what int64 nanoseconds hold
// (before 1677, after 2262) would wrap and read back as another; it is
// remembered as err instead, and the write refused.
type timeArgs struct{ err error }

func (a *timeArgs) at(what string, t time.Time) any {
	if t.IsZero() {
		return nil
	}
	if (t.Before(earliestTime) || t.After(latestTime)) && a.err == nil {
		a.err = fmt.Errorf("%s %s is outside the times the Hub's database holds", what, t.UTC().Format(time.RFC3339))
	}
	return t.UnixNano()
}

// fromNullNanos is timeArgs.at's inverse.
func fromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

// checkCategory refuses a category no kind has.
func checkCategory(c hub.NotificationCategory) error {
	if c != hub.CategoryNeedsAnswer && c != hub.CategoryCompleted {
		return fmt.Errorf("unknown notification category %q", c)
	}
	return nil
}

const pushDeviceCols = `id, user_name, device_session, subscription, endpoint_digest,
	all_workspaces, needs_answer, completed, created_at, last_sent_at, last_ack_at, lists_digest`

// storedDevice is a device's row, with the digest of its lists.
type storedDevice struct {
	d     hub.PushDevice
	lists []byte
}

func scanPushDevice(sc scanner) (storedDevice, error) {
	var s storedDevice
	d := &s.d
	var session, digest []byte
	var created, sent, acked sql.NullInt64
	if err := sc.Scan(&d.ID, &d.User, &session, &d.Subscription, &digest,
		&d.AllWorkspaces, &d.NeedsAnswer, &d.Completed, &created, &sent, &acked, &s.lists); err != nil {
		return storedDevice{}, err
	}
	// The schema keeps both digests at 32 bytes.
	copy(d.DeviceSession[:], session)
	copy(d.EndpointDigest[:], digest)
	d.CreatedAt, d.LastSentAt, d.LastAckAt = fromNullNanos(created), fromNullNanos(sent), fromNullNanos(acked)
	return s, nil
}

// listsDigest is the SHA-256 digest of d's selection and cutoffs, every
// field length-prefixed so that no two lists share an encoding. A device's
// row keeps it, so a put that leaves the lists as they are (a send moving
// LastSentAt) need not rewrite them: up to 768 rows at the enrollment
// limits, most of the cost of the put.
func listsDigest(d hub.PushDevice) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b := binary.AppendUvarint(nil, uint64(len(d.WorkspaceIDs)))
	for _, ws := range d.WorkspaceIDs {
		b = str(b, ws)
	}
	b = binary.AppendUvarint(b, uint64(len(d.Cutoffs)))
	for _, c := range d.Cutoffs {
		b = str(str(b, c.WorkspaceID), string(c.Category))
		if c.Since.IsZero() {
			b = append(b, 0)
		} else {
			b = binary.BigEndian.AppendUint64(append(b, 1), uint64(c.Since.UnixNano()))
		}
	}
	sum := sha256.Sum256(b)
	return sum[:]
}

// deviceWorkspace and deviceCutoff are rows of a device's lists.
type deviceWorkspace struct{ device, workspace string }

type deviceCutoff struct {
	device string
	cutoff hub.PushCutoff
}

func (t *tx) PushDevices() ([]hub.PushDevice, error) {
	rows, err := queryAll(t, scanPushDevice, `SELECT `+pushDeviceCols+` FROM push_devices ORDER BY seq`)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	ds := make([]hub.PushDevice, len(rows))
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		ds[i], at[r.d.ID] = r.d, i
	}
	// Three queries whatever the number of devices; the primary keys give
	// each list in its order.
	wss, err := queryAll(t, func(sc scanner) (deviceWorkspace, error) {
		var r deviceWorkspace
		return r, sc.Scan(&r.device, &r.workspace)
	}, `SELECT device_id, workspace_id FROM push_device_workspaces ORDER BY device_id, pos`)
	if err != nil {
		return nil, err
	}
	for _, r := range wss {
		i, ok := at[r.device]
		if !ok {
			return nil, orphan(r.device)
		}
		ds[i].WorkspaceIDs = append(ds[i].WorkspaceIDs, r.workspace)
	}
	cuts, err := queryAll(t, func(sc scanner) (deviceCutoff, error) {
		var r deviceCutoff
		var category string
		var since sql.NullInt64
		if err := sc.Scan(&r.device, &r.cutoff.WorkspaceID, &category, &since); err != nil {
			return r, err
		}
		r.cutoff.Category, r.cutoff.Since = hub.NotificationCategory(category), fromNullNanos(since)
		if err := checkCategory(r.cutoff.Category); err != nil {
			return r, fmt.Errorf("cutoff of push device %q: %w", r.device, err)
		}
		return r, nil
	}, `SELECT device_id, workspace_id, category, since FROM push_device_cutoffs ORDER BY device_id, pos`)
	if err != nil {
		return nil, err
	}
	for _, r := range cuts {
		i, ok := at[r.device]
		if !ok {
			return nil, orphan(r.device)
		}
		ds[i].Cutoffs = append(ds[i].Cutoffs, r.cutoff)
	}
	// Lists changed behind the adapter's back would be skipped by the
	// next put that keeps them: they are an error, as any row it did not
	// write.
	for i, r := range rows {
		if !bytes.Equal(listsDigest(ds[i]), r.lists) {
			return nil, internal(fmt.Errorf("the lists of push device %q do not match their digest", r.d.ID))
		}
	}
	return ds, nil
}

// orphan reports a list row of a device that does not exist: only a
// write with the foreign keys off leaves one.
func orphan(device string) error {
	return internal(fmt.Errorf("a list of push device %q outlived it", device))
}

func (t *tx) PutPushDevice(d hub.PushDevice) error {
	var times timeArgs
	created, sent, acked := times.at("created", d.CreatedAt), times.at("last sent", d.LastSentAt), times.at("last acknowledged", d.LastAckAt)
	since := make([]any, len(d.Cutoffs))
	for i, c := range d.Cutoffs {
		if err := checkCategory(c.Category); err != nil {
			return unstorableNotice(fmt.Errorf("cutoff of push device %q: %w", d.ID, err))
		}
		since[i] = times.at("cutoff", c.Since)
	}
	if times.err != nil {
		return unstorableNotice(fmt.Errorf("push device %q: %w", d.ID, times.err))
	}
	// The user and the endpoint are checked first, to say what is wrong
	// (the write lock is held, so nothing changes in between); the
	// foreign key and the UNIQUE constraint stay as the last word. The
	// same query reads the digest of the lists stored under d.ID.
	var userOK, held bool
	var stored []byte
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM users WHERE name = ?),
		EXISTS (SELECT 1 FROM push_devices WHERE endpoint_digest = ? AND id <> ?),
		(SELECT lists_digest FROM push_devices WHERE id = ?)`,
		d.User, d.EndpointDigest[:], d.ID, d.ID).Scan(&userOK, &held, &stored)
	switch {
	case err != nil:
		return internal(err)
	case !userOK:
		return hub.Errorf(hub.NotFound, "user %q not found", d.User)
	case held:
		return hub.Errorf(hub.Conflict, "another device holds this push subscription")
	}
	sub := d.Subscription
	if sub == nil {
		sub = []byte{} // the column is NOT NULL; no subscription is an empty one
	}
	lists := listsDigest(d)
	_, err = t.exec(`INSERT INTO push_devices (`+pushDeviceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET user_name = excluded.user_name, device_session = excluded.device_session,
			subscription = excluded.subscription, endpoint_digest = excluded.endpoint_digest,
			all_workspaces = excluded.all_workspaces, needs_answer = excluded.needs_answer,
			completed = excluded.completed, created_at = excluded.created_at,
			last_sent_at = excluded.last_sent_at, last_ack_at = excluded.last_ack_at,
			lists_digest = excluded.lists_digest`,
		d.ID, d.User, d.DeviceSession[:], sub, d.EndpointDigest[:],
		d.AllWorkspaces, d.NeedsAnswer, d.Completed, created, sent, acked, lists)
	switch {
	case isConstraint(err, "FOREIGN KEY"):
		return hub.Errorf(hub.NotFound, "user %q not found", d.User)
	case isConstraint(err, "UNIQUE"):
		return hub.Errorf(hub.Conflict, "another device holds this push subscription")
	case err != nil:
		return internal(err)
	}
	if bytes.Equal(stored, lists) {
		return nil // the lists stored are these
	}
	return t.putDeviceLists(d, since)
}

// putDeviceLists replaces the selection and the cutoffs of device d, the
// cutoffs' times already bound as since.
func (t *tx) putDeviceLists(d hub.PushDevice, since []any) error {
	if _, err := t.exec(`DELETE FROM push_device_workspaces WHERE device_id = ?`, d.ID); err != nil {
		return internal(err)
	}
	if _, err := t.exec(`DELETE FROM push_device_cutoffs WHERE device_id = ?`, d.ID); err != nil {
		return internal(err)
	}
	for i, ws := range d.WorkspaceIDs {
		if _, err := t.exec(`INSERT INTO push_device_workspaces (device_id, pos, workspace_id) VALUES (?, ?, ?)`,
			d.ID, i, ws); err != nil {
			return internal(err)
		}
	}
	for i, c := range d.Cutoffs {
		if _, err := t.exec(`INSERT INTO push_device_cutoffs (device_id, pos, workspace_id, category, since) VALUES (?, ?, ?, ?, ?)`,
			d.ID, i, c.WorkspaceID, string(c.Category), since[i]); err != nil {
			return internal(err)
		}
	}
	return nil
}

// DeletePushDevice relies on ON DELETE CASCADE for the device's lists
// and deliveries.
func (t *tx) DeletePushDevice(id string) (bool, error) {
	n, err := t.count(`DELETE FROM push_devices WHERE id = ?`, id)
	return n > 0, err
}
