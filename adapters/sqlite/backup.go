package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
)

// maxIntegrityMessages bounds what integrity_check reports of a damaged
// database: enough to say what is wrong, never the whole of a large one.
const maxIntegrityMessages = 5

// Snapshot writes a consistent copy of the database at dbPath to dst, a
// new file (mode 0600; an existing dst is refused), checks the copy with
// PRAGMA integrity_check and returns its schema version. On failure dst is
// removed.
//
// It works beside a running Wharf: it reads over a read-only connection
// that runs no migration and takes no lock but SQLite's, and VACUUM INTO
// writes the copy within one read transaction, which WAL lets run beside
// the writer, so the copy holds exactly the commits made before it began.
// The copy is a rollback-journal database on its own, with no log. A
// database newer than this Wharf is refused (*NewerSchemaError), the copy
// checked too, since a newer Wharf may have migrated it meanwhile.
func Snapshot(ctx context.Context, dbPath, dst string) (schema int, err error) {
	if _, err := os.Stat(dbPath); err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkNotNewer(dbPath); err != nil {
		return 0, err
	}
	// VACUUM INTO takes an empty file: making it here makes it private
	// and refuses an existing one.
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(dst)
			os.Remove(dst + "-journal")
		}
	}()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: dbPath}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", dst); err != nil {
		return 0, fmt.Errorf("snapshot of %s: %w", dbPath, err)
	}
	if err := db.Close(); err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	return Check(ctx, dst)
}

// Check checks the database file at path, which nothing else may be
// writing (a snapshot or a restored copy): PRAGMA integrity_check must
// answer ok and its schema must not be newer than this Wharf's. It returns
// the schema version. It reads the file as it is, immutable: it makes no
// file beside it and ignores any log.
func Check(ctx context.Context, path string) (schema int, err error) {
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("check database: %w", err)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		return 0, fmt.Errorf("check database: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA integrity_check(%d)", maxIntegrityMessages))
	if err != nil {
		return 0, fmt.Errorf("check database: %w", err)
	}
	var problems []string
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return 0, fmt.Errorf("check database: %w", err)
		}
		if msg != "ok" {
			problems = append(problems, msg)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, fmt.Errorf("check database: %w", err)
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("the database failed its integrity check: %s", strings.Join(problems, "; "))
	}
	if schema, err = schemaVersion(ctx, db); err != nil {
		return 0, err
	}
	if latest := LatestSchema(); schema > latest {
		return 0, &NewerSchemaError{Database: schema, Wharf: latest}
	}
	return schema, nil
}
