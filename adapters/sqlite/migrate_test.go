package sqlite_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// latestMigration is the highest migration number on disk.
func latestMigration(t *testing.T) int {
	is := is.New(t)
	entries, err := os.ReadDir("migrations")
	is.NoErr(err) // list the migrations
	latest := 0
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		n, err := strconv.Atoi(num)
		is.NoErr(err) // every migration starts with its number
		latest = max(latest, n)
	}
	return latest
}

// schema returns the SQL of every table and index in the database at path,
// sorted by name, without SQLite's internal ones.
func schema(t *testing.T, path string) string {
	is := is.New(t)
	db, err := sql.Open("sqlite", path)
	is.NoErr(err) // open for inspection
	defer db.Close()
	rows, err := db.Query(`SELECT name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name`)
	is.NoErr(err) // read the schema
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var name, text string
		is.NoErr(rows.Scan(&name, &text)) // scan one object
		b.WriteString(name + ": " + text + "\n")
	}
	is.NoErr(rows.Err()) // the whole schema was read
	return b.String()
}

// TestUpgradeFrom0001 builds a database the way a Wharf that knew only
// migration 0001 left it, with a user and a session in it, and checks that
// Open upgrades it to the same schema a new database gets, keeping the data
// and wiring the new tables' foreign keys to the old ones.
func TestUpgradeFrom0001(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "old.db")

	db := oldDatabase(t, old, 1)
	_, err := db.Exec(`INSERT INTO users (name, password_hash, created_at) VALUES ('ann', 'h', 1)`)
	is.NoErr(err) // a user from before the upgrade
	_, err = db.Exec(`INSERT INTO sessions (digest, handle, user_name, device_label, issued_at, expires_at)
		VALUES (x'01', 'h-1', 'ann', 'laptop', 1, 2)`)
	is.NoErr(err)        // and a session of hers
	is.NoErr(db.Close()) // close the old database

	s, err := sqlite.Open(old)
	is.NoErr(err)                                // the upgrade applies cleanly
	is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
		ss, err := tx.DeviceSessionsOfUser("ann")
		is.NoErr(err)                                          // read the old session
		is.True(len(ss) == 1 && ss[0].DeviceLabel == "laptop") // old data survives
		return nil
	}))
	at := time.Unix(1_800_000_000, 1)
	doc := "README.md"
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { // the update succeeds
		is.NoErr(tx.CreateWorkspace(hub.Workspace{ID: "w1", Path: "/srv/w1", DisplayName: "w1", Backend: "local", RegisteredAt: at})) // new table works
		is.NoErr(tx.PutPersonalState("ann", "w1", hub.PersonalState{DocumentPath: &doc}))                                             // a new record referencing an old user
		return nil
	}))
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteUser("ann") })) // delete the old user
	is.NoErr(s.View(ctx, func(tx hub.Tx) error {                                   // the view succeeds
		st, err := tx.PersonalState("ann", "w1")
		is.NoErr(err)                   // read the state
		is.True(st.DocumentPath == nil) // the new table cascades from the old one
		return nil
	}))
	is.NoErr(s.Close()) // close the upgraded store
	checkUpgraded(t, old)
}

// TestUpgradeFrom0002 builds a database the way a Wharf that knew
// migrations up to 0002 left it, with a user, two workspaces, a personal
// state and an activity view, and checks that Open drops the activity views
// and adds the activity marks of 0003 with their foreign keys wired to the
// old users and workspaces tables, keeping the other data.
func TestUpgradeFrom0002(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "old.db")

	db := oldDatabase(t, old, 2)
	_, err := db.Exec(`INSERT INTO users (name, password_hash, created_at) VALUES ('ann', 'h', 1);
		INSERT INTO workspace_ids (id) VALUES ('w1'), ('w2');
		INSERT INTO workspaces (id, path, display_name, backend, auto_start, registered_at)
			VALUES ('w1', '/srv/w1', 'w1', 'local', 0, 1), ('w2', '/srv/w2', 'w2', 'local', 0, 2);
		INSERT INTO personal_states (user_name, workspace_id, document_path) VALUES ('ann', 'w2', 'README.md');
		INSERT INTO activity_views (user_name, workspace_id, viewed_at) VALUES ('ann', 'w1', 7)`)
	is.NoErr(err)        // a user, workspaces, a state and a view from before the upgrade
	is.NoErr(db.Close()) // close the old database

	s, err := sqlite.Open(old)
	is.NoErr(err)                                  // the upgrade applies cleanly
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { // the update succeeds
		ws, err := tx.Workspaces()
		is.NoErr(err)                                                 // read the old workspaces
		is.True(len(ws) == 2 && ws[0].ID == "w1" && ws[1].ID == "w2") // old workspaces survive
		st, err := tx.PersonalState("ann", "w2")
		is.NoErr(err)                                                      // read the old state
		is.True(st.DocumentPath != nil && *st.DocumentPath == "README.md") // old state survives
		ms, err := tx.ActivityMarks()
		is.NoErr(err)        // read the marks
		is.Equal(len(ms), 0) // the old view is not carried over as a mark
		for _, m := range []hub.ActivityMark{
			{WorkspaceID: "w1", Stamp: 1}, {WorkspaceID: "w1", User: "ann", Stamp: 2},
			{WorkspaceID: "w2", Stamp: 3}, {WorkspaceID: "w2", User: "ann", Stamp: 4},
		} {
			is.NoErr(tx.PutActivityMark(m)) // a mark referencing old rows
		}
		return nil
	}))
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteWorkspace("w1") })) // delete an old workspace
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteUser("ann") }))     // and the old user
	is.NoErr(s.View(ctx, func(tx hub.Tx) error {                                       // the view succeeds
		ms, err := tx.ActivityMarks()
		is.NoErr(err)                                                   // read the marks left
		is.Equal(ms, []hub.ActivityMark{{WorkspaceID: "w2", Stamp: 3}}) // the new tables cascade from both old ones
		return nil
	}))
	is.NoErr(s.Close()) // close the upgraded store
	checkUpgraded(t, old)
}

// TestUpgradeFrom0003 builds a database the way a Wharf that knew
// migrations up to 0003 left it, with two workspaces and an activity mark,
// and checks that Open adds the credential tables of 0004 with their
// assignments wired to the old workspaces table, keeping the other data.
func TestUpgradeFrom0003(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "old.db")

	db := oldDatabase(t, old, 3)
	_, err := db.Exec(`INSERT INTO workspace_ids (id) VALUES ('w1'), ('w2');
		INSERT INTO workspaces (id, path, display_name, backend, auto_start, registered_at)
			VALUES ('w1', '/srv/w1', 'w1', 'local', 0, 1), ('w2', '/srv/w2', 'w2', 'local', 0, 2);
		INSERT INTO activity_finishes (workspace_id, stamp) VALUES ('w2', 5)`)
	is.NoErr(err)        // workspaces and a mark from before the upgrade
	is.NoErr(db.Close()) // close the old database

	s, err := sqlite.Open(old)
	is.NoErr(err) // the upgrade applies cleanly
	key := hub.Credential{ID: "k1", Name: "key", Type: hub.CredentialSSH, Capabilities: []hub.Capability{hub.CapSSHSigning},
		Enabled: true, CreatedAt: time.Unix(1, 0), Fingerprint: "SHA256:k1", Protected: true}
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { // the update succeeds
		ms, err := tx.ActivityMarks()
		is.NoErr(err)                                                   // read the old mark
		is.Equal(ms, []hub.ActivityMark{{WorkspaceID: "w2", Stamp: 5}}) // old data survives
		is.NoErr(tx.CreateCredential(key, []byte("sealed")))            // the new table works
		for _, ws := range []string{"w1", "w2"} {
			is.NoErr(tx.PutCredentialAssignment(hub.CredentialAssignment{WorkspaceID: ws, CredentialID: "k1", Role: hub.RoleSigning, Policy: hub.PolicyAlways})) // an assignment referencing an old workspace
		}
		return nil
	}))
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteWorkspace("w1") })) // delete an old workspace
	is.NoErr(s.View(ctx, func(tx hub.Tx) error {                                       // the view succeeds
		as, err := tx.CredentialAssignments()
		is.NoErr(err)                                      // read the assignments left
		is.True(len(as) == 1 && as[0].WorkspaceID == "w2") // the new table cascades from the old one
		return nil
	}))
	is.NoErr(s.Close()) // close the upgraded store
	checkUpgraded(t, old)
}

// TestUpgradeFrom0006 builds a database the way a Wharf that knew
// migrations up to 0006 left it, with two users and two workspaces, and
// checks that Open adds the push-notification tables of 0007 with their
// devices wired to the old users table and their deliveries and cursors to
// the old workspaces table, keeping the other data.
func TestUpgradeFrom0006(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "old.db")

	db := oldDatabase(t, old, 6)
	_, err := db.Exec(`INSERT INTO users (name, password_hash, created_at) VALUES ('ann', 'h', 1), ('bob', 'h', 2);
		INSERT INTO workspace_ids (id) VALUES ('w1'), ('w2');
		INSERT INTO workspaces (id, path, display_name, backend, auto_start, registered_at)
			VALUES ('w1', '/srv/w1', 'w1', 'local', 0, 1), ('w2', '/srv/w2', 'w2', 'local', 0, 2)`)
	is.NoErr(err)        // users and workspaces from before the upgrade
	is.NoErr(db.Close()) // close the old database

	s, err := sqlite.Open(old)
	is.NoErr(err) // the upgrade applies cleanly
	at := time.Unix(1_800_000_000, 1)
	device := func(id, user string) hub.PushDevice {
		return hub.PushDevice{ID: id, User: user, EndpointDigest: sha256.Sum256([]byte(id)), WorkspaceIDs: []string{"w1", "w2"},
			Cutoffs: []hub.PushCutoff{{WorkspaceID: "w1", Category: hub.CategoryCompleted, Since: at}}, CreatedAt: at}
	}
	delivery := func(ws, dev string) hub.PushDelivery {
		return hub.PushDelivery{Key: hub.PushDeliveryKey{WorkspaceID: ws, DeviceID: dev, NotificationID: "n"},
			Notification: hub.Notification{ID: "n", Kind: hub.NotifyTurnCompleted}, State: hub.DeliveryPending, CreatedAt: at}
	}
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { // the update succeeds
		us, err := tx.Users()
		is.NoErr(err)        // read the old users
		is.Equal(len(us), 2) // old data survives
		for _, d := range []hub.PushDevice{device("a", "ann"), device("b", "bob")} {
			is.NoErr(tx.PutPushDevice(d)) // a device of an old user
			for _, ws := range []string{"w1", "w2"} {
				is.NoErr(tx.PutPushDelivery(delivery(ws, d.ID))) // a delivery in an old workspace
			}
		}
		is.NoErr(tx.PutNotificationCursor("w1", "e:1")) // a cursor of an old workspace
		return nil
	}))
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteWorkspace("w1") })) // delete an old workspace
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteUser("ann") }))     // and an old user
	is.NoErr(s.View(ctx, func(tx hub.Tx) error {                                       // the view succeeds
		ds, err := tx.PushDevices()
		is.NoErr(err)                                                            // read the devices left
		is.True(len(ds) == 1 && ds[0].ID == "b" && len(ds[0].WorkspaceIDs) == 2) // the devices cascade from the old users, not the workspaces
		dls, err := tx.PushDeliveries()
		is.NoErr(err)                                                                                                      // read the deliveries left
		is.True(len(dls) == 1 && dls[0].Key == hub.PushDeliveryKey{WorkspaceID: "w2", DeviceID: "b", NotificationID: "n"}) // the deliveries cascade from both
		cs, err := tx.NotificationCursors()
		is.NoErr(err)        // read the cursors left
		is.Equal(len(cs), 0) // the cursor cascades from the old workspace
		return nil
	}))
	is.NoErr(s.Close()) // close the upgraded store
	checkUpgraded(t, old)
}

// oldDatabase creates a database at path the way a Wharf that knew only the
// migrations up to upTo left it, applying them as shipped, and returns it
// open for seeding; the caller closes it.
func oldDatabase(t *testing.T, path string, upTo int) *sql.DB {
	is := is.New(t)
	entries, err := os.ReadDir("migrations")
	is.NoErr(err) // list the migrations
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
	is.NoErr(err) // create the old database
	applied := 0
	for _, e := range entries { // ReadDir sorts by name, so by number
		num, _, _ := strings.Cut(e.Name(), "_")
		n, err := strconv.Atoi(num)
		is.NoErr(err) // every migration starts with its number
		if n > upTo {
			continue
		}
		body, err := os.ReadFile(filepath.Join("migrations", e.Name()))
		is.NoErr(err) // read the migration as shipped
		_, err = db.Exec(string(body))
		is.NoErr(err) // apply it
		applied++
	}
	is.Equal(applied, upTo) // migrations are numbered from 1 without gaps
	_, err = db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, upTo))
	is.NoErr(err) // as that release recorded it
	return db
}

// checkUpgraded checks that the upgraded database at old reopens without
// migrating again, has the schema of a new database (without the activity
// views 0003 dropped), records the latest migration, and is intact with no
// dangling reference.
func checkUpgraded(t *testing.T, old string) {
	is := is.New(t)
	s, err := sqlite.Open(old)
	is.NoErr(err)       // an upgraded database reopens without migrating again
	is.NoErr(s.Close()) // close it

	fresh := filepath.Join(t.TempDir(), "fresh.db")
	s, err = sqlite.Open(fresh)
	is.NoErr(err)       // a new database for comparison
	is.NoErr(s.Close()) // close it
	upgraded := schema(t, old)
	is.True(strings.Contains(upgraded, "CREATE TABLE personal_states"))        // the comparison below sees 0002's tables
	is.True(strings.Contains(upgraded, "CREATE TABLE activity_view_marks"))    // and 0003's
	is.True(strings.Contains(upgraded, "CREATE TABLE credential_assignments")) // and 0004's
	is.True(strings.Contains(upgraded, "CREATE TABLE push_deliveries"))        // and 0007's
	is.True(!strings.Contains(upgraded, "activity_views"))                     // 0003 dropped 0002's activity views, table and index
	is.Equal(upgraded, schema(t, fresh))                                       // upgraded and new databases have the same schema

	db, err := sql.Open("sqlite", old)
	is.NoErr(err) // inspect the upgraded file
	defer db.Close()
	var version int
	is.NoErr(db.QueryRow(`PRAGMA user_version`).Scan(&version)) // read its version
	is.Equal(version, latestMigration(t))                       // it records the latest migration
	var check string
	is.NoErr(db.QueryRow(`PRAGMA integrity_check`).Scan(&check)) // check the file
	is.Equal(check, "ok")                                        // intact
	rows, err := db.Query(`PRAGMA foreign_key_check`)
	is.NoErr(err)          // check foreign keys
	is.True(!rows.Next())  // no dangling reference
	is.NoErr(rows.Close()) // done
}
