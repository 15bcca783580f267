package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
)

// newerDatabase writes, in a new directory, a database as a Wharf whose
// schema is ahead of this one's left it, and returns its path. In
// "crashed" the version bump and its rows are still in the write-ahead log,
// as a newer Wharf killed before a checkpoint leaves them: the main file
// alone says an older version.
func newerDatabase(t *testing.T, mode string, version int) string {
	is := is.New(t)
	src := filepath.Join(t.TempDir(), "wharf.db")
	journal := "WAL"
	if mode == "rollback journal" {
		journal = "DELETE"
	}
	db, err := sql.Open("sqlite", src+"?_pragma=journal_mode("+journal+")")
	is.NoErr(err) // create the database
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`PRAGMA wal_autocheckpoint = 0; CREATE TABLE future (x TEXT); PRAGMA user_version = 2`)
	is.NoErr(err) // an older schema, in the main file
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	is.NoErr(err) // checkpointed
	_, err = db.Exec(fmt.Sprintf(`INSERT INTO future VALUES ('a'), ('b'); PRAGMA user_version = %d`, version))
	is.NoErr(err) // then a newer one
	dir := t.TempDir()
	if mode == "crashed" {
		for _, name := range []string{"wharf.db", "wharf.db-wal"} { // copied while open: what a kill leaves
			data, err := os.ReadFile(filepath.Join(filepath.Dir(src), name))
			is.NoErr(err)                                                 // read the live file
			is.NoErr(os.WriteFile(filepath.Join(dir, name), data, 0o600)) // as the kill left it
		}
		is.NoErr(db.Close()) // close the original
		return filepath.Join(dir, "wharf.db")
	}
	is.NoErr(db.Close()) // a clean close checkpoints everything into the main file
	data, err := os.ReadFile(src)
	is.NoErr(err)                                                       // read it
	is.NoErr(os.WriteFile(filepath.Join(dir, "wharf.db"), data, 0o600)) // alone, as a clean stop leaves it
	return filepath.Join(dir, "wharf.db")
}

// TestADatabaseFromANewerWharfIsRefusedUntouched opens databases whose
// schema is ahead of this Wharf's: each is refused with a message naming
// both versions and what to do, and neither the database file nor its
// write-ahead log changes, nor does a log appear.
func TestADatabaseFromANewerWharfIsRefusedUntouched(t *testing.T) {
	for _, mode := range []string{"cleanly stopped", "crashed", "rollback journal"} {
		t.Run(mode, func(t *testing.T) {
			is := is.New(t)
			latest := latestMigration(t)
			path := newerDatabase(t, mode, latest+2)
			before, err := os.ReadFile(path)
			is.NoErr(err) // the database as the newer Wharf left it
			walBefore, walErr := os.ReadFile(path + "-wal")
			is.Equal(mode == "crashed", walErr == nil) // only the crashed one has a log

			_, err = sqlite.Open(path)
			is.True(err != nil) // refused
			want := fmt.Sprintf("database schema %d is newer than this wharf (%d); use a newer wharf or restore a backup", latest+2, latest)
			is.Equal(err.Error(), want) // the message names both versions and the way out
			var newer *sqlite.NewerSchemaError
			is.True(errors.As(err, &newer))                                                // callers can tell it apart
			is.Equal(*newer, sqlite.NewerSchemaError{Database: latest + 2, Wharf: latest}) // with both versions

			after, err := os.ReadFile(path)
			is.NoErr(err)           // the database is still there
			is.Equal(after, before) // byte for byte
			walAfter, err := os.ReadFile(path + "-wal")
			if walErr != nil {
				is.True(errors.Is(err, os.ErrNotExist)) // no log appeared
			} else {
				is.NoErr(err)                 // the log is still there
				is.Equal(walAfter, walBefore) // unchanged
			}
			_, err = os.Stat(path + "-gen")
			is.True(errors.Is(err, os.ErrNotExist)) // nor did the commit counter
		})
	}
}
