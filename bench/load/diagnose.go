package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the driver adapters/sqlite uses
)

// authDiag is the in-process cost of hub.Authenticate (one SQLite read
// transaction), the part of every authenticated request the probe lacks.
type authDiag struct {
	Goroutines int
	Ops        int
	Elapsed    time.Duration
	Errors     int
}

// PerCall is the mean latency of one call.
func (a authDiag) PerCall() time.Duration {
	if a.Ops == 0 {
		return 0
	}
	return a.Elapsed * time.Duration(a.Goroutines) / time.Duration(a.Ops)
}

// PerSecond is the calls completed per second by all goroutines together.
func (a authDiag) PerSecond() float64 { return float64(a.Ops) / a.Elapsed.Seconds() }

// diagnoseAuthenticate calls hub.Authenticate in a loop from 1 and from
// GOMAXPROCS goroutines, one second (or 200,000 calls) each.
func diagnoseAuthenticate(ctx context.Context, w *wharf, sessionID string) []authDiag {
	var out []authDiag
	for _, g := range []int{1, runtime.GOMAXPROCS(0)} {
		out = append(out, loop(g, time.Second, 200_000, func() error {
			_, err := w.hub.Authenticate(ctx, sessionID)
			return err
		}))
	}
	return out
}

// diagnoseState calls hub.State in a loop from one goroutine for one
// second (or 200,000 calls): the work of the state answer beyond
// authentication, without HTTP and JSON.
func diagnoseState(ctx context.Context, w *wharf, sessionID string) (authDiag, error) {
	caller, err := w.hub.Authenticate(ctx, sessionID)
	if err != nil {
		return authDiag{}, err
	}
	return loop(1, time.Second, 200_000, func() error {
		_, err := w.hub.State(ctx, caller)
		return err
	}), nil
}

// loop calls f from g goroutines until d has passed or maxOps calls were
// made, and reports the calls and errors.
func loop(g int, d time.Duration, maxOps int, f func() error) authDiag {
	var mu sync.Mutex
	res := authDiag{Goroutines: g}
	start := time.Now()
	until := start.Add(d)
	var wg sync.WaitGroup
	for range g {
		wg.Go(func() {
			ops, errs := 0, 0
			for ops < maxOps/g && time.Now().Before(until) {
				if f() != nil {
					errs++
				}
				ops++
			}
			mu.Lock()
			res.Ops += ops
			res.Errors += errs
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// sqlDiag is one way of running the session lookup query.
type sqlDiag struct {
	Name string
	authDiag
}

// diagnoseSQL times the session lookup Wharf runs on every authenticated
// request (SELECT by digest on the sessions table) against the same
// database file, opened as adapters/sqlite opens its read pool, three ways:
// as Wharf runs it (a transaction around an unprepared query), without the
// transaction, and as a prepared statement without a transaction. It says
// how much of hub.Authenticate's cost is the transaction and the per-call
// statement preparation rather than SQLite's lookup itself.
func diagnoseSQL(ctx context.Context, w *wharf, sessionID string) ([]sqlDiag, error) {
	path := filepath.Join(w.dir, "wharf.db")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_pragma=query_only(1)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	const q = `SELECT digest, handle, user_name, device_label, issued_at, expires_at, revoked_at FROM sessions WHERE digest = ?`
	digest := sha256.Sum256([]byte(sessionID))
	scan := func(row *sql.Row) error {
		var d []byte
		var handle, user, label string
		var issued, expires int64
		var revoked sql.NullInt64
		return row.Scan(&d, &handle, &user, &label, &issued, &expires, &revoked)
	}
	stmt, err := db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	if err := scan(stmt.QueryRowContext(ctx, digest[:])); err != nil {
		return nil, fmt.Errorf("session lookup: %w", err)
	}
	ways := []struct {
		name string
		f    func() error
	}{
		{"transaction + unprepared query (Wharf's shape)", func() error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			if err := scan(tx.QueryRowContext(ctx, q, digest[:])); err != nil {
				tx.Rollback()
				return err
			}
			return tx.Commit()
		}},
		{"unprepared query, no transaction", func() error { return scan(db.QueryRowContext(ctx, q, digest[:])) }},
		{"prepared statement, no transaction", func() error { return scan(stmt.QueryRowContext(ctx, digest[:])) }},
	}
	var out []sqlDiag
	for _, way := range ways {
		out = append(out, sqlDiag{way.name, loop(1, 500*time.Millisecond, 100_000, way.f)})
	}
	return out, nil
}
