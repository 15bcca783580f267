// Package sqlite implements hub.Store over an embedded SQLite database
// (modernc.org/sqlite, no cgo).
//
// Durability: WAL with synchronous=FULL, so an acknowledged commit survives
// power loss. Beside the database file a commit counter (`-gen`) lets
// every process that opens the database see at once that another one
// committed (hub.Store.ExternalGeneration). Writes go through one connection in BEGIN IMMEDIATE
// transactions, which take the write lock up front instead of failing with
// SQLITE_BUSY_SNAPSHOT on upgrade; reads use a small pool of query-only
// connections that never block the writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/wharfhub/wharf/hub"
)

//go:embed migrations/*.sql
var migrations embed.FS

var _ hub.Store = (*Store)(nil)

// Store is a hub.Store backed by one SQLite file.
type Store struct {
	write *sql.DB // one connection, BEGIN IMMEDIATE
	read  *sql.DB // query-only connections

	writeStmts, readStmts *stmtCache
	gen                   *generation
}

// Open opens (creating if needed, with mode 0600) the database at path and
// applies pending migrations.
//
// A database whose schema is newer is refused (*NewerSchemaError) before
// anything is written to it or beside it, so the newer Wharf it came from
// finds it as it left it.
func Open(path string) (*Store, error) {
	if err := checkNotNewer(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	base := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)"
	w, err := sql.Open("sqlite", base+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	s := &Store{write: w}
	if err := s.migrate(context.Background()); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	s.read = r
	if s.gen, err = openGeneration(path); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	s.writeStmts, s.readStmts = &stmtCache{db: w}, &stmtCache{db: r}
	return s, nil
}

// Close closes both connection pools and the commit counter.
func (s *Store) Close() error {
	s.readStmts.close()
	s.writeStmts.close()
	return errors.Join(s.read.Close(), s.write.Close(), s.gen.release())
}

// ExternalGeneration counts the commits of other Stores on the same
// database file, from this process or another (see generation).
func (s *Store) ExternalGeneration() uint64 { return s.gen.external() }

// View runs fn in a read-only transaction over one snapshot.
func (s *Store) View(ctx context.Context, fn func(hub.Tx) error) error {
	return s.run(ctx, s.read, s.readStmts, fn)
}

// Update runs fn in a write transaction and commits when fn returns nil.
func (s *Store) Update(ctx context.Context, fn func(hub.Tx) error) error {
	return s.run(ctx, s.write, s.writeStmts, fn)
}

func (s *Store) run(ctx context.Context, db *sql.DB, cache *stmtCache, fn func(hub.Tx) error) error {
	sqlTx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return internal(err)
	}
	t := &tx{ctx: ctx, tx: sqlTx, cache: cache}
	// Deferred first, so it runs last: once the transaction has ended and
	// its connection is back in the pool.
	defer func() {
		if len(t.missed) > 0 {
			cache.prepare(t.missed)
		}
	}()
	// However fn leaves (an error, a panic, or runtime.Goexit as
	// t.FailNow does), a transaction that did not commit is rolled back
	// before the deferred prepare above: it gives the connection back,
	// and the write pool has only that one.
	committed := false
	defer func() {
		if !committed {
			sqlTx.Rollback()
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	// A failed Commit ends the transaction too; the Rollback above then
	// does nothing.
	if err := sqlTx.Commit(); err != nil {
		return internal(err)
	}
	committed = true
	if db == s.write {
		s.gen.committed()
	}
	return nil
}

// migrate applies every embedded migration numbered above the database's
// user_version, each in its own transaction. checkNotNewer refused a newer
// database before it was opened; the check here covers one that a newer
// Wharf migrated in between.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	have, err := schemaVersion(ctx, s.write)
	if err != nil {
		return err
	}
	if latest := ms[len(ms)-1].n; have > latest {
		return &NewerSchemaError{Database: have, Wharf: latest}
	}
	for _, m := range ms {
		if m.n <= have {
			continue
		}
		body, err := migrations.ReadFile("migrations/" + m.name)
		if err != nil {
			return err
		}
		if err := s.apply(ctx, m, string(body)); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// rebuildsMarker begins a migration that rebuilds tables other tables
// reference. SQLite cannot change a constraint in place, and dropping the
// old table with foreign keys on would cascade its deletion into every
// table that references it; so such a migration runs with foreign keys
// off (a pragma that has no effect inside a transaction, hence set on
// the connection before it) and commits only if every reference still
// holds (SQLite's documented procedure for schema changes).
const rebuildsMarker = "-- wharf: rebuilds tables\n"

// apply runs one migration and records its number, in one transaction on
// one connection.
func (s *Store) apply(ctx context.Context, m migration, body string) error {
	conn, err := s.write.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	rebuilds := strings.HasPrefix(body, rebuildsMarker)
	if rebuilds {
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return err
		}
		// The connection goes back to the pool: it must check references
		// again whatever happens here.
		defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON")
	}
	t, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer t.Rollback() // after Commit, a no-op
	if _, err := t.ExecContext(ctx, body); err != nil {
		return err
	}
	if rebuilds {
		var broken int
		if err := t.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&broken); err != nil {
			return err
		}
		if broken > 0 {
			return fmt.Errorf("%d rows would reference what is not there", broken)
		}
	}
	if _, err := t.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.n)); err != nil {
		return err
	}
	return t.Commit()
}

func internal(err error) error {
	return hub.Wrap(hub.Internal, err, "the Hub's database failed")
}
