package daemontest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	_ "modernc.org/sqlite" // the driver the daemon's store uses
)

// A journal census reads the recovery journals a stopped daemon left in
// its state directory. Some journals recover silently (a worktree
// create whose tree git never made, a worktree delete whose tree git
// removed) and one waits, by design, for a retry the API offers (a
// worktree create whose registration failed), so the log alone cannot
// say that a restart settled everything: the census can. Read after
// every kill and after the graceful stop, it names each journal by its
// id, which the store never gives twice: a journal seen by two censuses
// outlived a restart and the checks after it, which must settle every
// journal, and one seen after the graceful stop was never settled.
//
// It reads the database's journals table, the one piece of the store's
// schema the harness knows, from a copy of the database and its WAL, so
// the state directory the next daemon recovers is exactly the one the
// killed daemon left.

// journalDB is the daemon's database in its state directory.
const journalDB = "wharf.db"

// journalCensus is the journals a stopped daemon left: kind by id.
type journalCensus map[int64]string

// censusJournals reads the journals in stateDir's database, using tmp (a
// directory of the caller's) for the copy, and hands the copy to also,
// when set, before it is removed. A state directory without a database
// has none.
func censusJournals(ctx context.Context, stateDir, tmp string, also func(*sql.DB)) (journalCensus, error) {
	src := filepath.Join(stateDir, journalDB)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return journalCensus{}, nil
	}
	dir, err := os.MkdirTemp(tmp, "census-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dst := filepath.Join(dir, journalDB)
	for _, suffix := range []string{"", "-wal"} { // not -shm: SQLite rebuilds it from the WAL
		if err := copyFile(src+suffix, dst+suffix); err != nil && !(suffix != "" && errors.Is(err, fs.ErrNotExist)) {
			return nil, err
		}
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: dst}).EscapedPath())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT id, kind FROM journals")
	if err != nil {
		return nil, fmt.Errorf("journal census: %w", err)
	}
	defer rows.Close()
	c := journalCensus{}
	for rows.Next() {
		var id int64
		var kind string
		if err := rows.Scan(&id, &kind); err != nil {
			return nil, fmt.Errorf("journal census: %w", err)
		}
		c[id] = kind
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if also != nil {
		also(db)
	}
	return c, nil
}

// copyFile copies the file at src to a new file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// census reads the journals the stopped daemon left, counts them by kind
// in the figures and reports every one the previous census saw too: it
// outlived the restart between them. After a graceful stop (graceful),
// with no write under way, every journal is reported. who names the
// daemon ("the daemon killed by kill 3").
func (r *crashRun) census(ctx context.Context, who string, graceful bool) {
	c, err := censusJournals(ctx, r.d.StateDir(), r.cfg.Dir, func(db *sql.DB) { r.stopped(ctx, who, db) })
	if err != nil {
		r.fig.problem("%s: %v", who, err)
		return
	}
	for _, id := range slices.Sorted(maps.Keys(c)) {
		kind := c[id]
		r.fig.JournalsLeft[kind]++
		_, seen := r.lastCensus[id]
		switch {
		case seen:
			r.fig.Pending++
			r.fig.problem("%s left journal %d (%s), which outlived the restart before it", who, id, kind)
		case graceful:
			r.fig.Pending++
			r.fig.problem("%s left journal %d (%s) with no write under way", who, id, kind)
		}
	}
	r.lastCensus = c
}
