package sqlite

import (
	"database/sql"
	"fmt"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the delivery journal and the notification-feed cursors
// (migration 0007); tx_notifications.go the devices and what both share.

func (t *tx) NotificationCursors() (map[string]string, error) {
	type cursor struct{ ws, cursor string }
	rows, err := queryAll(t, func(sc scanner) (cursor, error) {
		var c cursor
		return c, sc.Scan(&c.ws, &c.cursor)
	}, `SELECT workspace_id, cursor FROM notification_cursors`)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(rows))
	for _, c := range rows {
		m[c.ws] = c.cursor
	}
	return m, nil
}

func (t *tx) PutNotificationCursor(ws, cursor string) error {
	// Removing one needs the workspace too, as the contract says; the
	// foreign key would only refuse an insert.
	if err := t.requireWorkspace(ws); err != nil {
		return err
	}
	q, args := `INSERT INTO notification_cursors (workspace_id, cursor) VALUES (?, ?)
		ON CONFLICT (workspace_id) DO UPDATE SET cursor = excluded.cursor`, []any{ws, cursor}
	if cursor == "" {
		q, args = `DELETE FROM notification_cursors WHERE workspace_id = ?`, []any{ws}
	}
	if _, err := t.exec(q, args...); err != nil {
		return internal(err)
	}
	return nil
}

// requireWorkspace answers NotFound unless the workspace is registered.
func (t *tx) requireWorkspace(id string) error {
	ok, err := t.exists(`SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`, id)
	if err != nil {
		return err
	}
	if !ok {
		return hub.Errorf(hub.NotFound, "workspace %q not found", id)
	}
	return nil
}

// checkDelivery refuses a delivery state or a notification kind the
// records do not name.
func checkDelivery(d hub.PushDelivery) error {
	switch d.State {
	case hub.DeliveryPending, hub.DeliveryHeld, hub.DeliverySent, hub.DeliveryDiscarded:
	default:
		return fmt.Errorf("delivery of %q: unknown state %q", d.Key.NotificationID, d.State)
	}
	if d.Notification.Kind.Category() == "" {
		return fmt.Errorf("delivery of %q: unknown notification kind %q", d.Key.NotificationID, d.Notification.Kind)
	}
	return nil
}

const pushDeliveryCols = `workspace_id, device_id, notification_id, conversation_id, source_id, kind,
	notification_created_at, state, created_at, held_at, released_at, next_at, deadline, settled_at, attempts,
	other_notification_id`

func scanPushDelivery(sc scanner) (hub.PushDelivery, error) {
	var d hub.PushDelivery
	var kind, state string
	var otherID sql.NullString
	var noticed, created, held, released, next, deadline, settled sql.NullInt64
	n := &d.Notification
	if err := sc.Scan(&d.Key.WorkspaceID, &d.Key.DeviceID, &d.Key.NotificationID, &n.ConversationID, &n.SourceID, &kind,
		&noticed, &state, &created, &held, &released, &next, &deadline, &settled, &d.Attempts, &otherID); err != nil {
		return hub.PushDelivery{}, err
	}
	n.ID, n.Kind, n.CreatedAt = d.Key.NotificationID, hub.NotificationKind(kind), fromNullNanos(noticed)
	if otherID.Valid {
		n.ID = otherID.String
	}
	d.State = hub.PushDeliveryState(state)
	d.CreatedAt, d.HeldAt, d.ReleasedAt = fromNullNanos(created), fromNullNanos(held), fromNullNanos(released)
	d.NextAt, d.Deadline, d.SettledAt = fromNullNanos(next), fromNullNanos(deadline), fromNullNanos(settled)
	return d, checkDelivery(d)
}

func (t *tx) PushDeliveries() ([]hub.PushDelivery, error) {
	// A NULL (zero) time sorts first, as the zero time is the earliest.
	return queryAll(t, scanPushDelivery, `SELECT `+pushDeliveryCols+` FROM push_deliveries ORDER BY created_at, seq`)
}

func (t *tx) PutPushDelivery(d hub.PushDelivery) error {
	if err := checkDelivery(d); err != nil {
		return unstorableNotice(err)
	}
	n := &d.Notification
	// The notification's id is the key's in every delivery the Hub
	// makes, and then stored once; another is kept beside it.
	var otherID any
	if n.ID != d.Key.NotificationID {
		otherID = n.ID
	}
	var times timeArgs
	args := []any{d.Key.WorkspaceID, d.Key.DeviceID, d.Key.NotificationID, n.ConversationID, n.SourceID, string(n.Kind),
		times.at("notification created", n.CreatedAt), string(d.State), times.at("created", d.CreatedAt),
		times.at("held", d.HeldAt), times.at("released", d.ReleasedAt), times.at("next attempt", d.NextAt),
		times.at("deadline", d.Deadline), times.at("settled", d.SettledAt), d.Attempts, otherID}
	if times.err != nil {
		return unstorableNotice(fmt.Errorf("delivery of %q: %w", d.Key.NotificationID, times.err))
	}
	// The foreign keys would refuse the write anyway, but NotFound must
	// say what is missing.
	var deviceOK, workspaceOK bool
	err := t.queryRow(`SELECT EXISTS (SELECT 1 FROM push_devices WHERE id = ?),
		EXISTS (SELECT 1 FROM workspaces WHERE id = ?)`, d.Key.DeviceID, d.Key.WorkspaceID).Scan(&deviceOK, &workspaceOK)
	switch {
	case err != nil:
		return internal(err)
	case !deviceOK:
		return hub.Errorf(hub.NotFound, "push device %q not found", d.Key.DeviceID)
	case !workspaceOK:
		return hub.Errorf(hub.NotFound, "workspace %q not found", d.Key.WorkspaceID)
	}
	_, err = t.exec(`INSERT INTO push_deliveries (`+pushDeliveryCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, device_id, notification_id) DO UPDATE SET
			conversation_id = excluded.conversation_id, source_id = excluded.source_id, kind = excluded.kind,
			notification_created_at = excluded.notification_created_at, state = excluded.state,
			created_at = excluded.created_at, held_at = excluded.held_at, released_at = excluded.released_at,
			next_at = excluded.next_at, deadline = excluded.deadline, settled_at = excluded.settled_at,
			attempts = excluded.attempts, other_notification_id = excluded.other_notification_id`, args...)
	switch {
	case isConstraint(err, "FOREIGN KEY"):
		return hub.Errorf(hub.NotFound, "push device or workspace not found")
	case err != nil:
		return internal(err)
	}
	return nil
}

func (t *tx) DeletePushDelivery(k hub.PushDeliveryKey) error {
	_, err := t.exec(`DELETE FROM push_deliveries WHERE workspace_id = ? AND device_id = ? AND notification_id = ?`,
		k.WorkspaceID, k.DeviceID, k.NotificationID)
	if err != nil {
		return internal(err)
	}
	return nil
}
