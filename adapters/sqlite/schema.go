package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// NewerSchemaError refuses a database whose schema is ahead of this
// Wharf's: a newer Wharf wrote it, and this one could misread or damage
// it. The database is left as it was.
type NewerSchemaError struct {
	Database int // the database's schema version (its user_version)
	Wharf    int // the latest schema version this Wharf knows
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("database schema %d is newer than this wharf (%d); use a newer wharf or restore a backup", e.Database, e.Wharf)
}

// migration is one embedded migration: its number and file name.
type migration struct {
	n    int
	name string
}

// loadMigrations lists the embedded migrations in order, once.
var loadMigrations = sync.OnceValues(func() ([]migration, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", e.Name())
		}
		ms = append(ms, migration{n, e.Name()})
	}
	if len(ms) == 0 {
		return nil, errors.New("no migrations embedded")
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].n < ms[j].n })
	return ms, nil
})

// LatestSchema returns the schema version this Wharf migrates databases
// to: the number of its last migration.
func LatestSchema() int {
	ms, err := loadMigrations()
	if err != nil {
		panic(err) // the embedded files are part of the binary: a test catches this
	}
	return ms[len(ms)-1].n
}

// checkNotNewer refuses the database at path when its schema is newer
// than this Wharf's, without changing anything of it: Open calls it before
// it opens the database for writing, since a writing connection would
// fold a pending write-ahead log into the file when it closes, or switch a
// rollback-journal database to WAL. A missing file passes (Open creates
// it).
//
// Without a write-ahead log beside it, the file is the whole database, so
// its header holds the version (a big-endian word at offset 60). With one,
// the log may hold a newer header, so SQLite reads it, over a read-only
// connection: that never writes the database or its log (it may make the
// log's shared-memory index, -shm, which holds no data).
func checkNotNewer(path string) error {
	var have int
	if _, err := os.Lstat(path + "-wal"); err == nil {
		db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
		if err != nil {
			return fmt.Errorf("open database: %w", err)
		}
		defer db.Close()
		if have, err = schemaVersion(context.Background(), db); err != nil {
			return err
		}
	} else {
		var err error
		if have, err = headerVersion(path); err != nil {
			return err
		}
	}
	if latest := LatestSchema(); have > latest {
		return &NewerSchemaError{Database: have, Wharf: latest}
	}
	return nil
}

// sqliteMagic begins every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// headerVersion reads the schema version from the header of the database
// file at path: 0 for a missing or empty file (a new database), an error
// for a file that is not a database.
func headerVersion(path string) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open database: %w", err)
	}
	defer f.Close()
	var h [64]byte
	n, err := io.ReadFull(f, h[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return 0, nil
	case err != nil || string(h[:16]) != sqliteMagic:
		return 0, fmt.Errorf("open database: %s is not a SQLite database", path)
	}
	return int(int32(binary.BigEndian.Uint32(h[60:64]))), nil
}

// schemaVersion reads the schema version (user_version) over db.
func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var have int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return have, nil
}
