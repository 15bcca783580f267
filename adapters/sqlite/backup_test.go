package sqlite_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/adapters/sqlite/sqlitetest"
	"github.com/wharfhub/wharf/hub"
)

// addUsers commits one user per name, each in its own transaction.
func addUsers(t *testing.T, s *sqlite.Store, names ...string) {
	is := is.New(t)
	for _, n := range names {
		is.NoErr(s.Update(t.Context(), func(tx hub.Tx) error { // commit the user
			return tx.CreateUser(hub.User{Name: n, PasswordHash: "h", CreatedAt: time.Unix(1, 0)})
		}))
	}
}

// userNames lists the users of the database file at path, read as a Store.
func userNames(t *testing.T, path string) []string {
	is := is.New(t)
	s, err := sqlite.Open(path)
	is.NoErr(err) // open the copy as Wharf would
	defer s.Close()
	var names []string
	is.NoErr(s.View(t.Context(), func(tx hub.Tx) error { // read its users
		us, err := tx.Users()
		for _, u := range us {
			names = append(names, u.Name)
		}
		return err
	}))
	return names
}

// TestASnapshotBesideARunningStoreHoldsItsCommits snapshots a database
// that a Store holds open with commits still in its log: the copy is
// private, passes its check, records the schema and holds every commit.
func TestASnapshotBesideARunningStoreHoldsItsCommits(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	s, err := sqlite.Open(filepath.Join(dir, "wharf.db"))
	is.NoErr(err) // the running Store
	defer s.Close()
	addUsers(t, s, "ann", "bob")

	dst := filepath.Join(t.TempDir(), "snap.db")
	schema, err := sqlite.Snapshot(t.Context(), filepath.Join(dir, "wharf.db"), dst)
	is.NoErr(err)                           // the snapshot is taken
	is.Equal(schema, sqlite.LatestSchema()) // at the current schema
	fi, err := os.Stat(dst)
	is.NoErr(err)                                  // it is there
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
	_, err = os.Stat(dst + "-wal")
	is.True(errors.Is(err, os.ErrNotExist))                        // a file on its own, with no log
	is.Equal(userNames(t, dst), []string{"ann", "bob"})            // every commit is in it
	addUsers(t, s, "cy")                                           // the Store goes on writing
	is.Equal(len(userNames(t, filepath.Join(dir, "wharf.db"))), 3) // unhindered
}

// TestASnapshotUnderWritesIsOneMomentOfThem takes a snapshot while a
// writer commits numbered users one by one: the copy holds every user
// committed before it began, and its users are a gapless prefix of the
// writer's, as one transaction sees them.
func TestASnapshotUnderWritesIsOneMomentOfThem(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	s, err := sqlite.Open(filepath.Join(dir, "wharf.db"))
	is.NoErr(err) // the running Store
	defer s.Close()

	var mu sync.Mutex
	acked := 0
	stop, done := make(chan struct{}), make(chan error, 1)
	started := make(chan struct{})
	go func() {
		for i := 0; i < 100_000; i++ { // bounded; stopped long before
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			err := s.Update(context.Background(), func(tx hub.Tx) error {
				return tx.CreateUser(hub.User{Name: fmt.Sprintf("u%06d", i), PasswordHash: "h", CreatedAt: time.Unix(1, 0)})
			})
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			acked = i + 1
			mu.Unlock()
			if i == 50 {
				close(started)
			}
		}
		done <- errors.New("the writer ran out of users")
	}()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the writer did not get going")
	}
	mu.Lock()
	before := acked
	mu.Unlock()
	dst := filepath.Join(t.TempDir(), "snap.db")
	_, err = sqlite.Snapshot(t.Context(), filepath.Join(dir, "wharf.db"), dst)
	close(stop)
	is.NoErr(<-done) // the writer wrote throughout
	is.NoErr(err)    // the snapshot is taken under writes

	names := userNames(t, dst)
	is.True(len(names) >= before) // every user acknowledged before the snapshot began is in it
	for i, n := range names {
		is.Equal(n, fmt.Sprintf("u%06d", i)) // with no gap
	}
	t.Logf("%d users acknowledged before the snapshot, %d in it", before, len(names))
}

// TestADamagedDatabaseGivesNoSnapshot damages a database in two ways: a
// snapshot of it is refused, saying why, and leaves no file.
func TestADamagedDatabaseGivesNoSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{"an index that no longer matches its table", func(t *testing.T, path string) {
			sqlitetest.CorruptIndex(t, path, "sqlite_autoindex_users_1", "user-carol")
		}, "integrity check"},
		{"a page that is no b-tree page", func(t *testing.T, path string) {
			is := is.New(t)
			data, err := os.ReadFile(path)
			is.NoErr(err) // the file
			size := int(binary.BigEndian.Uint16(data[16:18]))
			for p := 1; p*size < len(data); p++ {
				data[p*size] = 0xff // every page's type byte but the first's
			}
			is.NoErr(os.WriteFile(path, data, 0o600))
		}, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			path := filepath.Join(t.TempDir(), "wharf.db")
			s, err := sqlite.Open(path)
			is.NoErr(err) // a database
			addUsers(t, s, "user-ann", "user-bob", "user-carol")
			is.NoErr(s.Close()) // closed
			tc.damage(t, path)

			dst := filepath.Join(t.TempDir(), "snap.db")
			_, err = sqlite.Snapshot(t.Context(), path, dst)
			is.True(err != nil)                             // refused
			is.True(strings.Contains(err.Error(), tc.want)) // saying why
			_, err = os.Stat(dst)
			is.True(errors.Is(err, os.ErrNotExist)) // no copy is left
		})
	}
}

// TestASnapshotNeverReplacesAFile snapshots onto an existing file: it is
// refused and the file kept.
func TestASnapshotNeverReplacesAFile(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "wharf.db")
	s, err := sqlite.Open(path)
	is.NoErr(err) // a database
	is.NoErr(s.Close())
	dst := filepath.Join(t.TempDir(), "snap.db")
	is.NoErr(os.WriteFile(dst, []byte("mine"), 0o600)) // a file already there
	_, err = sqlite.Snapshot(t.Context(), path, dst)
	is.True(errors.Is(err, os.ErrExist)) // refused
	data, err := os.ReadFile(dst)
	is.NoErr(err)                  // still there
	is.Equal(string(data), "mine") // unchanged
}

// TestANewerDatabaseGivesNoSnapshot refuses to snapshot a database from
// a newer Wharf, as Open refuses it, and leaves no file.
func TestANewerDatabaseGivesNoSnapshot(t *testing.T) {
	is := is.New(t)
	path := newerDatabase(t, "cleanly stopped", sqlite.LatestSchema()+1)
	dst := filepath.Join(t.TempDir(), "snap.db")
	_, err := sqlite.Snapshot(t.Context(), path, dst)
	var newer *sqlite.NewerSchemaError
	is.True(errors.As(err, &newer)) // refused as newer
	_, err = os.Stat(dst)
	is.True(errors.Is(err, os.ErrNotExist)) // no copy is left
}
