package sqlite_test

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// updateFixtures makes the schema fixtures that are missing:
//
//	go test ./adapters/sqlite -run TestEveryEarlierSchema -update-fixtures
//
// A fixture, once committed, stands for the databases its release left
// behind and is never made again; delete one to remake it.
var updateFixtures = flag.Bool("update-fixtures", false, "write the missing testdata/schema-NNNN.db fixtures")

// seeds are the rows each migration's release wrote, run right after
// that migration when a fixture is made: every table a migration creates
// (or changes) gets representative rows, so the fixture of schema N has
// rows in every table that exists at N, put there by the schema of the
// time and carried through the migrations after it.
var seeds = map[int]string{
	1: `INSERT INTO users (name, password_hash, created_at) VALUES
			('ann', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', 1700000000000000001),
			('bob', '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', 1700000000000000002);
		INSERT INTO sessions (digest, handle, user_name, device_label, issued_at, expires_at, revoked_at) VALUES
			(x'0101010101010101010101010101010101010101010101010101010101010101', 'h-1', 'ann', 'laptop', 10, 20, NULL),
			(x'0202020202020202020202020202020202020202020202020202020202020202', 'h-2', 'bob', 'phone', 11, 21, 15);`,
	2: `INSERT INTO workspace_ids (id) VALUES ('w1'), ('w2'), ('w-forgotten');
		INSERT INTO workspaces (id, path, display_name, backend, auto_start, registered_at) VALUES
			('w1', '/srv/w1', 'one', 'local', 1, 30), ('w2', '/srv/w2', 'two', 'local', 0, 31);
		INSERT INTO journals (kind, data, created_at) VALUES ('rename', x'7b7d', 40), ('remove', x'7b7d', 41);
		DELETE FROM journals WHERE kind = 'rename';
		INSERT INTO personal_states (user_name, workspace_id, document_path, follow, preview_mode, compare_target, files_filter, last_pty_id)
			VALUES ('ann', 'w1', 'README.md', 1, 'split', 'HEAD', 'changed', 'pty-1'), ('bob', 'w2', NULL, NULL, NULL, NULL, NULL, NULL);
		INSERT INTO activity_views (user_name, workspace_id, viewed_at) VALUES ('ann', 'w1', 50);
		INSERT INTO settings (key, value) VALUES ('defaultParent', '/srv');`,
	3: `INSERT INTO activity_finishes (workspace_id, stamp) VALUES ('w1', 5), ('w2', 6);
		INSERT INTO activity_view_marks (user_name, workspace_id, stamp) VALUES ('ann', 'w1', 5), ('bob', 'w2', 4);`,
	4: `INSERT INTO credentials (id, name, type, capabilities, enabled, created_at, public_key, fingerprint, host, username, protected, sealed) VALUES
			('c-key', 'laptop', 'ssh', 'ssh-authentication,ssh-signing', 1, 60, 'ssh-ed25519 AAAA', 'SHA256:key', '', '', 1, x'00aa'),
			('c-token', 'forge', 'token', 'https-git', 1, 61, '', '', 'git.example.com', 'ann', 0, x'00bb');
		INSERT INTO credential_assignments (workspace_id, role, host, credential_id) VALUES
			('w1', 'signing', '', 'c-key'), ('w1', 'authentication', 'git.example.com', 'c-token');
		INSERT INTO credential_tool_overrides (tool, path) VALUES ('git', '/usr/local/bin/git');`,
	5: `INSERT INTO credential_assignments (workspace_id, role, host, credential_id, use_policy) VALUES
			('w2', 'signing', '', 'c-key', 'ask-once');`,
	6: `INSERT INTO worktree_provenance (checkout_id, repository_id, path, source_ref, created_by, created_at) VALUES
			('0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210', '/srv/w1-feature', 'main', 'ann', 70);`,
	7: `INSERT INTO push_devices (id, user_name, device_session, subscription, endpoint_digest, all_workspaces, needs_answer, completed,
			created_at, last_sent_at, last_ack_at, lists_digest) VALUES
			('d1', 'ann', x'0101010101010101010101010101010101010101010101010101010101010101', x'00cc',
			 x'0303030303030303030303030303030303030303030303030303030303030303', 0, 1, 1, 80, NULL, NULL,
			 x'0404040404040404040404040404040404040404040404040404040404040404');
		INSERT INTO push_device_workspaces (device_id, pos, workspace_id) VALUES ('d1', 0, 'w1'), ('d1', 1, 'w2');
		INSERT INTO push_device_cutoffs (device_id, pos, workspace_id, category, since) VALUES ('d1', 0, 'w1', 'completed', 81);
		INSERT INTO push_deliveries (workspace_id, device_id, notification_id, conversation_id, source_id, kind, notification_created_at,
			state, created_at, held_at, released_at, next_at, deadline, settled_at, attempts, other_notification_id) VALUES
			('w1', 'd1', 'n1', 'conv-1', 'src-1', 'turn-completed', 90, 'pending', 91, NULL, NULL, 92, 99, NULL, 1, NULL);
		INSERT INTO notification_cursors (workspace_id, cursor) VALUES ('w1', 'e:1');`,
	8: `INSERT INTO hosts (name, destination, added_at) VALUES ('gpu', 'ann@gpu.example.net', 100);
		INSERT INTO workspace_ids (id) VALUES ('w3');
		INSERT INTO workspaces (id, path, display_name, backend, auto_start, registered_at) VALUES
			('w3', '/srv/w1', 'one on gpu', 'ssh:gpu', 0, 101);`,
}

// dropped names the tables a migration removed on purpose, with the
// migration that did: their rows have no place in the schema after it.
var dropped = map[string]int{"activity_views": 3}

func fixturePath(n int) string { return filepath.Join("testdata", fmt.Sprintf("schema-%04d.db", n)) }

// makeFixture writes the fixture of schema upTo: each migration up to it
// as shipped, each followed by its release's rows, then compacted.
func makeFixture(t *testing.T, upTo int) {
	is := is.New(t)
	tmp := filepath.Join(t.TempDir(), "fixture.db")
	db, err := sql.Open("sqlite", tmp+"?_pragma=foreign_keys(1)")
	is.NoErr(err) // the new database
	db.SetMaxOpenConns(1)
	// The smallest page: a fixture holds a page or two per table and
	// index, and little else.
	_, err = db.Exec("PRAGMA page_size = 512")
	is.NoErr(err) // before the first table
	for n := 1; n <= upTo; n++ {
		matches, err := filepath.Glob(filepath.Join("migrations", fmt.Sprintf("%04d_*.sql", n)))
		is.NoErr(err)             // find the migration
		is.Equal(len(matches), 1) // one file per number
		body, err := os.ReadFile(matches[0])
		is.NoErr(err) // as shipped
		rebuilds := strings.HasPrefix(string(body), "-- wharf: rebuilds tables\n")
		if rebuilds { // as the Store applies it
			_, err = db.Exec("PRAGMA foreign_keys = OFF")
			is.NoErr(err) // outside the migration's transaction
		}
		_, err = db.Exec(string(body))
		is.NoErr(err) // applied
		if rebuilds {
			_, err = db.Exec("PRAGMA foreign_keys = ON")
			is.NoErr(err) // and back
		}
		seed, ok := seeds[n]
		is.True(ok) // every migration has its release's rows
		_, err = db.Exec(seed)
		is.NoErr(err) // written by that schema
		_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", n))
		is.NoErr(err) // as that release recorded it
	}
	_, err = db.Exec("VACUUM")
	is.NoErr(err)        // compact
	is.NoErr(db.Close()) // done
	data, err := os.ReadFile(tmp)
	is.NoErr(err)                                          // the fixture
	is.NoErr(os.MkdirAll("testdata", 0o755))               // its folder
	is.NoErr(os.WriteFile(fixturePath(upTo), data, 0o644)) // committed beside the tests
	t.Logf("wrote %s (%d bytes)", fixturePath(upTo), len(data))
}

// table is one table's rows as read: its columns and each row's values
// in rowid order.
type table struct {
	columns []string
	rows    [][]any
}

// readTables reads every table of the database at path, sqlite_sequence
// included (it keeps ids from being given again), or only the named
// columns of each table in only. It reads the file alone (immutable): no
// Store may have it open, or its last commits may be in a log it skips.
func readTables(t *testing.T, path string, only map[string]table) map[string]table {
	is := is.New(t)
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	is.NoErr(err) // open for reading
	defer db.Close()
	var names []string
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND (name NOT LIKE 'sqlite_%' OR name = 'sqlite_sequence') ORDER BY name`)
	is.NoErr(err) // list the tables
	for rows.Next() {
		var n string
		is.NoErr(rows.Scan(&n)) // a table
		names = append(names, n)
	}
	is.NoErr(rows.Close())
	out := map[string]table{}
	for _, name := range names {
		cols := "*"
		if only != nil {
			old, ok := only[name]
			if !ok {
				continue
			}
			cols = strings.Join(old.columns, ", ")
		}
		rows, err := db.Query(fmt.Sprintf("SELECT %s FROM %s ORDER BY rowid", cols, name))
		is.NoErr(err) // read the table
		columns, err := rows.Columns()
		is.NoErr(err) // its columns
		tb := table{columns: columns}
		for rows.Next() {
			vals := make([]any, len(columns))
			ptrs := make([]any, len(columns))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			is.NoErr(rows.Scan(ptrs...)) // a row
			tb.rows = append(tb.rows, vals)
		}
		is.NoErr(rows.Close())
		out[name] = tb
	}
	return out
}

// TestEveryEarlierSchemaUpgradesKeepingEveryRow opens, with this Wharf, a
// database left by every earlier schema (testdata/schema-NNNN.db, one
// per migration, made by the migrations of that time): each migrates to
// the current schema keeping every row of every table, each old column's
// value as it was, and reads back through the Store; only the tables a
// migration dropped on purpose are gone.
func TestEveryEarlierSchemaUpgradesKeepingEveryRow(t *testing.T) {
	latest := sqlite.LatestSchema()
	is.New(t).Equal(latest, latestMigration(t)) // the embedded migrations are those on disk
	for n := 1; n <= latest; n++ {
		t.Run(fmt.Sprintf("schema %d", n), func(t *testing.T) {
			is := is.New(t)
			if _, err := os.Stat(fixturePath(n)); errors.Is(err, os.ErrNotExist) && *updateFixtures {
				makeFixture(t, n)
			}
			data, err := os.ReadFile(fixturePath(n))
			if errors.Is(err, os.ErrNotExist) {
				t.Fatalf("no fixture of schema %d: make it with go test ./adapters/sqlite -run TestEveryEarlierSchema -update-fixtures, and commit it", n)
			}
			is.NoErr(err)                // the fixture
			is.True(len(data) <= 48<<10) // small: a page or two per table and index
			path := filepath.Join(t.TempDir(), "wharf.db")
			is.NoErr(os.WriteFile(path, data, 0o600)) // a copy to upgrade

			before := readTables(t, path, nil)
			for name, tb := range before {
				is.True(len(tb.rows) > 0 || name == "sqlite_sequence") // representative rows in every table
			}
			s, err := sqlite.Open(path)
			is.NoErr(err) // this Wharf opens and migrates it
			var fixture []string
			for name := range before {
				fixture = append(fixture, name)
			}
			slices.Sort(fixture)
			t.Logf("schema %d: %d bytes, tables %v", n, len(data), fixture)

			readThroughStore(t, s, n)
			is.NoErr(s.Close()) // closed: everything is in the file readTables reads
			kept := map[string]table{}
			for name, tb := range before {
				if by, ok := dropped[name]; ok && by > n {
					continue
				}
				kept[name] = tb
			}
			after := readTables(t, path, kept)
			for name, tb := range kept {
				got, ok := after[name]
				is.True(ok)                           // the table is still there
				is.Equal(len(got.rows), len(tb.rows)) // every row is kept
				for i := range tb.rows {
					is.Equal(got.rows[i], tb.rows[i]) // with every old column's value
				}
			}
			now := readTables(t, path, nil)
			for name := range dropped {
				_, ok := now[name]
				is.True(!ok) // the tables a migration dropped are gone
			}
			checkUpgraded(t, path)
		})
	}
}

// readThroughStore reads the fixture's rows through the Store, as the Hub
// reads them, for the families whose rows the seeds write whole.
func readThroughStore(t *testing.T, s *sqlite.Store, n int) {
	is := is.New(t)
	is.NoErr(s.View(t.Context(), func(tx hub.Tx) error { // the view succeeds
		us, err := tx.Users()
		is.NoErr(err)        // users decode
		is.Equal(len(us), 2) // both
		ss, err := tx.DeviceSessionsOfUser("bob")
		is.NoErr(err)                                         // sessions decode
		is.True(len(ss) == 1 && ss[0].DeviceLabel == "phone") // with their fields
		if n < 2 {
			return nil
		}
		ws, err := tx.Workspaces()
		is.NoErr(err)                                                          // workspaces decode
		is.True(len(ws) >= 2 && ws[0].DisplayName == "one" && ws[0].AutoStart) // in order, with their fields
		js, err := tx.Journals()
		is.NoErr(err)                                   // journals decode
		is.True(len(js) == 1 && js[0].Kind == "remove") // the pending one
		if n < 3 {
			return nil
		}
		ms, err := tx.ActivityMarks()
		is.NoErr(err)        // marks decode
		is.Equal(len(ms), 4) // all of them
		if n < 4 {
			return nil
		}
		cs, err := tx.Credentials()
		is.NoErr(err)                                              // credentials decode
		is.True(len(cs) == 2 && cs[1].Type == hub.CredentialToken) // in order
		as, err := tx.CredentialAssignments()
		is.NoErr(err) // assignments decode
		policies := map[hub.UsePolicy]int{}
		for _, a := range as {
			policies[a.Policy]++
		}
		if n < 5 {
			is.Equal(policies, map[hub.UsePolicy]int{hub.PolicyAlways: 2}) // older assignments allow every use
		} else {
			is.Equal(policies, map[hub.UsePolicy]int{hub.PolicyAlways: 2, hub.PolicyAskOnce: 1}) // and keep the policy they were given
		}
		tools, err := tx.CredentialToolOverrides()
		is.NoErr(err)                                      // overrides decode
		is.Equal(tools[hub.ToolGit], "/usr/local/bin/git") // kept
		if n < 6 {
			return nil
		}
		ps, err := tx.WorktreeProvenances("fedcba9876543210fedcba9876543210")
		is.NoErr(err)        // provenance decodes
		is.Equal(len(ps), 1) // kept
		if n < 7 {
			return nil
		}
		cur, err := tx.NotificationCursors()
		is.NoErr(err)                                 // cursors decode
		is.Equal(cur, map[string]string{"w1": "e:1"}) // kept
		if n < 8 {
			is.Equal(len(ws), 2) // the seeded workspaces
			return nil
		}
		hs, err := tx.Hosts()
		is.NoErr(err)                                                                   // hosts decode
		is.True(len(hs) == 1 && hs[0].Name == "gpu" && hs[0].AddedAt.UnixNano() == 100) // kept
		is.True(len(ws) == 3 && ws[2].Path == ws[0].Path && ws[2].Backend == "ssh:gpu") // one path on two machines
		return nil
	}))
}
