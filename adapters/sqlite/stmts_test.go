package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
	"github.com/wharfhub/wharf/hub"
)

// A statement is parsed once per pool: the first transaction runs it
// unprepared and prepares it when it ends, later ones reuse it, on the
// single write connection as on the read pool.
func TestStatementsArePreparedOnceAfterTheirFirstTransaction(t *testing.T) {
	is := is.New(t)
	s, err := Open(filepath.Join(t.TempDir(), "wharf.db"))
	is.NoErr(err) // open
	defer s.Close()
	ctx := context.Background()

	missed := func(run func(context.Context, func(hub.Tx) error) error) []string {
		var got []string
		err := run(ctx, func(x hub.Tx) error {
			_, _, err := x.Setting("k")
			got = x.(*tx).missed
			return err
		})
		is.NoErr(err) // read the setting
		return got
	}
	for _, pool := range []struct {
		name string
		run  func(context.Context, func(hub.Tx) error) error
	}{{"read", s.View}, {"write", s.Update}} {
		t.Run(pool.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(len(missed(pool.run)), 1) // the first transaction ran the statement unprepared
			is.Equal(len(missed(pool.run)), 0) // the next one found it prepared
			is.Equal(len(missed(pool.run)), 0) // and so does every later one
		})
	}
}

// A statement SQLite refuses to prepare keeps failing with SQLite's own
// error, and is not retried on every call.
func TestAStatementThatCannotBePreparedStillReportsItsError(t *testing.T) {
	is := is.New(t)
	s, err := Open(filepath.Join(t.TempDir(), "wharf.db"))
	is.NoErr(err) // open
	defer s.Close()
	for range 2 {
		err := s.View(context.Background(), func(x hub.Tx) error {
			_, err := x.(*tx).exec(`SELECT nope FROM nowhere`)
			return err
		})
		is.True(err != nil) // the bad statement fails
	}
	v, ok := s.readStmts.m.Load(`SELECT nope FROM nowhere`)
	is.True(ok)                               // it was tried once
	is.Equal(v.(*sql.Stmt), (*sql.Stmt)(nil)) // and remembered as unpreparable
}
