package daemontest

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestAJournalCensusReadsWhatAKilledDaemonLeft writes journals the way
// a daemon killed before its checkpoint leaves them (in the WAL only,
// the database still open) and takes the census twice: it reads them,
// leaves the state directory as it was, and reports a journal seen by
// two censuses, or any after a graceful stop.
func TestAJournalCensusReadsWhatAKilledDaemonLeft(t *testing.T) {
	is := is.New(t)
	state := t.TempDir()
	path := filepath.Join(state, journalDB)
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	is.NoErr(err) // opened
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE journals (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, data BLOB NOT NULL, created_at INTEGER NOT NULL)`)
	is.NoErr(err) // the store's table
	_, err = db.Exec(`INSERT INTO journals (kind, data, created_at) VALUES ('worktree-create', '{}', 1), ('worktree-delete', '{}', 2)`)
	is.NoErr(err) // two journals, in the WAL
	wal, err := os.ReadFile(path + "-wal")
	is.NoErr(err)         // the WAL holds them
	is.True(len(wal) > 0) // not checkpointed

	c, err := censusJournals(t.Context(), state, t.TempDir(), nil)
	is.NoErr(err)                                                          // read
	is.Equal(c, journalCensus{1: "worktree-create", 2: "worktree-delete"}) // both
	after, err := os.ReadFile(path + "-wal")
	is.NoErr(err)                        // the WAL is still there
	is.Equal(string(after), string(wal)) // untouched

	r := &crashRun{cfg: CrashConfig{Dir: t.TempDir()}, d: &Daemon{opts: Options{StateDir: state}},
		fig: Figures{JournalsLeft: map[string]int{}}, lastCensus: journalCensus{2: "worktree-delete", 7: "onboarding"}}
	r.census(t.Context(), "the daemon killed by kill 2", false)
	is.Equal(r.fig.JournalsLeft, map[string]int{"worktree-create": 1, "worktree-delete": 1}) // counted by kind
	is.Equal(r.fig.Pending, 1)                                                               // journal 2 outlived a restart
	is.Equal(len(r.fig.Problems), 1)                                                         // reported
	is.True(strings.Contains(r.fig.Problems[0], "journal 2 (worktree-delete)"))              // by id and kind

	r.lastCensus = nil
	r.census(t.Context(), "the daemon stopped gracefully", true)
	is.Equal(r.fig.Pending, 3) // after a graceful stop, every journal is pending

	empty, err := censusJournals(t.Context(), t.TempDir(), t.TempDir(), nil)
	is.NoErr(err)           // a state directory without a database
	is.Equal(len(empty), 0) // has no journal
}
