package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// seedNotifications opens a new database at path and stores in it a user,
// a workspace, a device of hers with a selection and a cutoff, a delivery
// to it and the workspace's cursor, then closes it.
func seedNotifications(t *testing.T, path string) {
	is := is.New(t)
	s, err := sqlite.Open(path)
	is.NoErr(err) // open a new database
	at := time.Unix(1_800_000_000, 1)
	d := hub.PushDevice{ID: "d1", User: "ann", DeviceSession: sha256.Sum256([]byte("login")), Subscription: []byte("sealed"),
		EndpointDigest: sha256.Sum256([]byte("https://fcm.googleapis.com/fcm/send/d1")), WorkspaceIDs: []string{"w1"},
		NeedsAnswer: true, Cutoffs: []hub.PushCutoff{{WorkspaceID: "w1", Category: hub.CategoryNeedsAnswer, Since: at}}, CreatedAt: at}
	dl := hub.PushDelivery{Key: hub.PushDeliveryKey{WorkspaceID: "w1", DeviceID: "d1", NotificationID: "n1"},
		Notification: hub.Notification{ID: "n1", ConversationID: "agent:c1", SourceID: "r1", Kind: hub.NotifyQuestionPending, CreatedAt: at},
		State:        hub.DeliveryPending, CreatedAt: at, NextAt: at, Deadline: at.Add(5 * time.Minute)}
	is.NoErr(s.Update(context.Background(), func(tx hub.Tx) error { // the update succeeds
		is.NoErr(tx.CreateUser(hub.User{Name: "ann", PasswordHash: "h", CreatedAt: at}))         // a user
		is.NoErr(tx.CreateWorkspace(hub.Workspace{ID: "w1", Path: "/srv/w1", Backend: "local"})) // a workspace
		is.NoErr(tx.PutPushDevice(d))                                                            // her device
		is.NoErr(tx.PutPushDelivery(dl))                                                         // a delivery to it
		is.NoErr(tx.PutNotificationCursor("w1", "e:1"))                                          // the workspace's cursor
		return nil
	}))
	is.NoErr(s.Close()) // close it
}

// A row the adapter did not write as it writes them is an Internal error
// when read, never a record the rules would not have let through: an
// unknown category, state or kind, a flag that is not a boolean, a list
// row of a device that does not exist, a list that is not the one the
// device's row keeps the digest of.
func TestCorruptNotificationRowsAreInternalErrors(t *testing.T) {
	devices := func(tx hub.Tx) error { _, err := tx.PushDevices(); return err }
	deliveries := func(tx hub.Tx) error { _, err := tx.PushDeliveries(); return err }
	for _, c := range []struct {
		name    string
		corrupt string
		read    func(hub.Tx) error
	}{
		{"UnknownCategory", `UPDATE push_device_cutoffs SET category = 'everything'`, devices},
		{"EmptyCategory", `UPDATE push_device_cutoffs SET category = ''`, devices},
		{"NotABoolean", `UPDATE push_devices SET needs_answer = 2`, devices},
		{"AnOrphanSelection", `PRAGMA foreign_keys = OFF; INSERT INTO push_device_workspaces (device_id, pos, workspace_id) VALUES ('d9', 0, 'w1')`, devices},
		{"AnOrphanCutoff", `PRAGMA foreign_keys = OFF; INSERT INTO push_device_cutoffs (device_id, pos, workspace_id, category) VALUES ('d9', 0, 'w1', 'completed')`, devices},
		{"ASelectionChangedBehindItsDigest", `UPDATE push_device_workspaces SET workspace_id = 'w9'`, devices},
		{"ACutoffChangedBehindItsDigest", `UPDATE push_device_cutoffs SET since = since + 1`, devices},
		{"ACutoffAddedBehindTheDigest", `INSERT INTO push_device_cutoffs (device_id, pos, workspace_id, category) VALUES ('d1', 1, 'w1', 'completed')`, devices},
		{"UnknownState", `UPDATE push_deliveries SET state = 'lost'`, deliveries},
		{"UnknownKind", `UPDATE push_deliveries SET kind = 'build-failed'`, deliveries},
		{"EmptyKind", `UPDATE push_deliveries SET kind = ''`, deliveries},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "wharf.db")
			seedNotifications(t, path)
			rawExec(t, path, c.corrupt)
			s, err := sqlite.Open(path)
			is.NoErr(err) // reopen
			defer s.Close()
			err = s.View(context.Background(), c.read)
			is.True(err != nil)                                           // the corrupt row is refused (KindOf(nil) is Internal too)
			is.Equal(hub.KindOf(err), hub.Internal)                       // as a failure of the store
			is.NoErr(s.View(context.Background(), func(tx hub.Tx) error { // the view succeeds
				cs, err := tx.NotificationCursors()
				is.NoErr(err)             // a sound record still reads
				is.Equal(cs["w1"], "e:1") // as stored
				return nil
			}))
		})
	}
}

// The schema keeps the invariants the adapter checks before writing, for
// whatever writes past it: one device per endpoint, digests of 32 bytes,
// one delivery per key, no list, delivery or cursor of something absent,
// no empty cursor.
func TestTheSchemaKeepsNotificationInvariants(t *testing.T) {
	const device = `INSERT INTO push_devices (id, user_name, device_session, subscription, endpoint_digest, all_workspaces, needs_answer, completed, lists_digest) VALUES `
	const delivery = `INSERT INTO push_deliveries (workspace_id, device_id, notification_id, conversation_id, source_id, kind, state, attempts) VALUES `
	digest := func(s string) string {
		d := sha256.Sum256([]byte(s))
		return "x'" + hex.EncodeToString(d[:]) + "'"
	}
	for _, c := range []struct {
		name, q string
		ok      bool
	}{
		{"ASecondDevice", device + `('d2', 'ann', ` + digest("l") + `, x'00', ` + digest("e2") + `, 0, 0, 0, ` + digest("lists") + `)`, true},
		{"ASecondDeviceWithTheSameEndpoint", device + `('d2', 'ann', ` + digest("l") + `, x'00', ` + digest("https://fcm.googleapis.com/fcm/send/d1") + `, 0, 0, 0, ` + digest("lists") + `)`, false},
		{"ASecondDeviceWithTheSameID", device + `('d1', 'ann', ` + digest("l") + `, x'00', ` + digest("e2") + `, 0, 0, 0, ` + digest("lists") + `)`, false},
		{"ADeviceOfAnUnknownUser", device + `('d2', 'eve', ` + digest("l") + `, x'00', ` + digest("e2") + `, 0, 0, 0, ` + digest("lists") + `)`, false},
		{"AShortEndpointDigest", device + `('d2', 'ann', ` + digest("l") + `, x'00', x'0102', 0, 0, 0, ` + digest("lists") + `)`, false},
		{"AShortSessionDigest", device + `('d2', 'ann', x'0102', x'00', ` + digest("e2") + `, 0, 0, 0, ` + digest("lists") + `)`, false},
		{"AShortListsDigest", device + `('d2', 'ann', ` + digest("l") + `, x'00', ` + digest("e2") + `, 0, 0, 0, x'01')`, false},
		{"ADeviceWithoutASubscription", device + `('d2', 'ann', ` + digest("l") + `, NULL, ` + digest("e2") + `, 0, 0, 0, ` + digest("lists") + `)`, false},
		{"ASelectionOfAnUnknownDevice", `INSERT INTO push_device_workspaces (device_id, pos, workspace_id) VALUES ('d9', 0, 'w1')`, false},
		{"ASelectionOfAForgottenWorkspace", `INSERT INTO push_device_workspaces (device_id, pos, workspace_id) VALUES ('d1', 1, 'gone')`, true},
		{"TwoWorkspacesInOnePlace", `INSERT INTO push_device_workspaces (device_id, pos, workspace_id) VALUES ('d1', 0, 'w2')`, false},
		{"ACutoffOfAnUnknownDevice", `INSERT INTO push_device_cutoffs (device_id, pos, workspace_id, category) VALUES ('d9', 0, 'w1', 'completed')`, false},
		{"ASecondDeliveryWithTheSameKey", delivery + `('w1', 'd1', 'n1', 'c', 's', 'turn-completed', 'pending', 0)`, false},
		{"ADeliveryOfAnotherNotification", delivery + `('w1', 'd1', 'n2', 'c', 's', 'turn-completed', 'pending', 0)`, true},
		{"ADeliveryToAnUnknownDevice", delivery + `('w1', 'd9', 'n1', 'c', 's', 'turn-completed', 'pending', 0)`, false},
		{"ADeliveryInAnUnknownWorkspace", delivery + `('w9', 'd1', 'n1', 'c', 's', 'turn-completed', 'pending', 0)`, false},
		{"ACursorOfAnUnknownWorkspace", `INSERT INTO notification_cursors (workspace_id, cursor) VALUES ('w9', 'e:1')`, false},
		{"AnEmptyCursor", `UPDATE notification_cursors SET cursor = ''`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "wharf.db")
			seedNotifications(t, path)
			db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
			is.NoErr(err) // open behind the adapter's back
			defer db.Close()
			_, err = db.Exec(c.q)
			is.Equal(err == nil, c.ok) // the schema accepts or refuses the write
		})
	}
}
