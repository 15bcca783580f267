package sqlite_test

import (
	"context"
	"database/sql"
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
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")

	first, err := os.ReadFile(filepath.Join("migrations", "0001_users_sessions.sql"))
	is.NoErr(err) // read migration 0001 as shipped
	db, err := sql.Open("sqlite", old)
	is.NoErr(err) // create the old database
	_, err = db.Exec(string(first))
	is.NoErr(err) // apply 0001 only
	_, err = db.Exec(`PRAGMA user_version = 1`)
	is.NoErr(err) // as 0001's release recorded it
	_, err = db.Exec(`INSERT INTO users (name, password_hash, created_at) VALUES ('ann', 'h', 1)`)
	is.NoErr(err) // a user from before the upgrade
	_, err = db.Exec(`INSERT INTO sessions (digest, handle, user_name, device_label, issued_at, expires_at)
		VALUES (x'01', 'h-1', 'ann', 'laptop', 1, 2)`)
	is.NoErr(err)        // and a session of hers
	is.NoErr(db.Close()) // close the old database

	s, err := sqlite.Open(old)
	is.NoErr(err)                                // the upgrade applies cleanly
	is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
		ss, err := tx.SessionsOfUser("ann")
		is.NoErr(err)                                          // read the old session
		is.True(len(ss) == 1 && ss[0].DeviceLabel == "laptop") // old data survives
		return nil
	}))
	at := time.Unix(1_800_000_000, 1)
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { // the update succeeds
		is.NoErr(tx.CreateWorkspace(hub.Workspace{ID: "w1", Path: "/srv/w1", DisplayName: "w1", Backend: "local", RegisteredAt: at})) // new table works
		is.NoErr(tx.MarkActivityViewed("ann", "w1", at))                                                                              // a new record referencing an old user
		return nil
	}))
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { return tx.DeleteUser("ann") })) // delete the old user
	is.NoErr(s.View(ctx, func(tx hub.Tx) error {                                   // the view succeeds
		got, err := tx.ActivityViewed("ann", "w1")
		is.NoErr(err)         // read the view
		is.True(got.IsZero()) // the new table cascades from the old one
		return nil
	}))
	is.NoErr(s.Close()) // close the upgraded store

	s, err = sqlite.Open(old)
	is.NoErr(err)       // an upgraded database reopens without migrating again
	is.NoErr(s.Close()) // close it

	fresh := filepath.Join(dir, "fresh.db")
	s, err = sqlite.Open(fresh)
	is.NoErr(err)       // a new database for comparison
	is.NoErr(s.Close()) // close it
	upgraded := schema(t, old)
	is.True(strings.Contains(upgraded, "CREATE TABLE personal_states")) // the comparison below sees 0002's tables
	is.Equal(upgraded, schema(t, fresh))                                // upgraded and new databases have the same schema

	db, err = sql.Open("sqlite", old)
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
