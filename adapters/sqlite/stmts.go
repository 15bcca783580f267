package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps a pool's prepared statements, keyed by their text, so a
// transaction does not parse its SQL again on every call: parsing was about
// a third of a one-row read.
//
// Statements are prepared after a transaction has ended, never inside one:
// the write pool has a single connection, and preparing on the pool while
// a transaction holds it would wait for ever. A statement a transaction
// found missing runs unprepared that once and is prepared when the
// transaction ends; database/sql then re-prepares it lazily on each other
// connection of the pool it meets.
type stmtCache struct {
	db *sql.DB
	m  sync.Map // string → *sql.Stmt, or nil when preparing failed
}

// get returns the prepared statement for q, or nil.
func (c *stmtCache) get(q string) *sql.Stmt {
	v, ok := c.m.Load(q)
	if !ok {
		return nil
	}
	s, _ := v.(*sql.Stmt)
	return s
}

// prepare prepares each of qs not yet cached. A statement that cannot be
// prepared is remembered as such and keeps running unprepared (it fails
// there with its own error, if any).
func (c *stmtCache) prepare(qs []string) {
	for _, q := range qs {
		if _, ok := c.m.Load(q); ok {
			continue
		}
		s, err := c.db.PrepareContext(context.Background(), q)
		if err != nil {
			c.m.Store(q, (*sql.Stmt)(nil))
			continue
		}
		if _, loaded := c.m.LoadOrStore(q, s); loaded {
			s.Close()
		}
	}
}

// close closes every cached statement; the cache is not used afterwards.
func (c *stmtCache) close() {
	c.m.Range(func(_, v any) bool {
		if s, _ := v.(*sql.Stmt); s != nil {
			s.Close()
		}
		return true
	})
}

// stmt returns q prepared for this transaction, or nil when q is not
// prepared yet (it is noted, to be prepared when the transaction ends).
func (t *tx) stmt(q string) *sql.Stmt {
	if s := t.cache.get(q); s != nil {
		return t.tx.StmtContext(t.ctx, s)
	}
	t.missed = append(t.missed, q)
	return nil
}

func (t *tx) exec(q string, args ...any) (sql.Result, error) {
	if s := t.stmt(q); s != nil {
		return s.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, q, args...)
}

func (t *tx) queryRow(q string, args ...any) *sql.Row {
	if s := t.stmt(q); s != nil {
		return s.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, q, args...)
}

func (t *tx) query(q string, args ...any) (*sql.Rows, error) {
	if s := t.stmt(q); s != nil {
		return s.QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, q, args...)
}
