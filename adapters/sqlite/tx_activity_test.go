package sqlite_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/hub"
)

// A stamp is a uint64 but SQLite's INTEGER is signed: the largest stamp that
// fits round-trips, and one above it is refused as an Internal error rather
// than stored wrapped to a negative number that would sort first.
func TestActivityStampsAboveInt64AreRefused(t *testing.T) {
	is := is.New(t)
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "wharf.db"))
	is.NoErr(err) // open
	defer s.Close()
	ctx := context.Background()
	top := uint64(math.MaxInt64)
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error { // the update succeeds
		is.NoErr(tx.CreateUser(hub.User{Name: "ann", PasswordHash: "h", CreatedAt: time.Unix(1, 0)}))                                   // a user
		is.NoErr(tx.CreateWorkspace(hub.Workspace{ID: "w1", Path: "/srv/w1", Backend: "local"}))                                        // a workspace
		is.NoErr(tx.PutActivityMark(hub.ActivityMark{WorkspaceID: "w1", Stamp: top}))                                                   // the largest stamp that fits
		is.Equal(hub.KindOf(tx.PutActivityMark(hub.ActivityMark{WorkspaceID: "w1", Stamp: top + 1})), hub.Internal)                     // a finish above it
		is.Equal(hub.KindOf(tx.PutActivityMark(hub.ActivityMark{WorkspaceID: "w1", User: "ann", Stamp: math.MaxUint64})), hub.Internal) // a view above it
		return nil
	}))
	is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
		ms, err := tx.ActivityMarks()
		is.NoErr(err)                                                     // read the marks
		is.Equal(ms, []hub.ActivityMark{{WorkspaceID: "w1", Stamp: top}}) // the refused puts changed nothing
		return nil
	}))
}
