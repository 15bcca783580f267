package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

func TestStore(t *testing.T) {
	porttest.Store(t, func(t *testing.T) hub.Store {
		s, err := sqlite.Open(filepath.Join(t.TempDir(), "wharf.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestStorePeers(t *testing.T) {
	porttest.StorePeers(t, func(t *testing.T) (hub.Store, hub.Store) {
		path := filepath.Join(t.TempDir(), "wharf.db")
		a, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	})
}

func TestOpenSettings(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "wharf.db")
	s, err := sqlite.Open(path)
	is.NoErr(err) // open a new database
	ctx := context.Background()
	is.NoErr(s.Update(ctx, func(tx hub.Tx) error {
		return tx.CreateUser(hub.User{Name: "ann", PasswordHash: "h", CreatedAt: time.Unix(1, 0)})
	}))
	is.NoErr(s.Close())

	for _, name := range []string{path, path + "-gen"} {
		fi, err := os.Stat(name)
		is.NoErr(err)
		is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // the database and its commit counter are private
	}

	db, err := sql.Open("sqlite", path)
	is.NoErr(err)
	defer db.Close()
	var mode string
	is.NoErr(db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	is.Equal(mode, "wal") // WAL persists in the file

	s, err = sqlite.Open(path)
	is.NoErr(err) // reopen
	is.NoErr(s.View(ctx, func(tx hub.Tx) error {
		_, err := tx.User("ann")
		return err
	})) // data survives a reopen
	is.NoErr(s.Close())

	_, err = db.Exec("PRAGMA user_version = 9999")
	is.NoErr(err)
	_, err = sqlite.Open(path)
	is.True(err != nil)                                         // a newer schema is refused
	is.True(strings.Contains(err.Error(), "use a newer wharf")) // with advice
}
