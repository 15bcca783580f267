package daemon

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/wharfhub/wharf/adapters/sqlite"
	"github.com/wharfhub/wharf/adapters/statedir"
)

// Backup writes a backup archive of the state directory stateDir to
// file (statedir.WriteArchive: a new file, mode 0600, never replacing
// one): a consistent snapshot of the database, checked, and the key files
// beside it. It works whether or not a daemon serves stateDir: it takes
// no lock and runs no migration (sqlite.Snapshot), and it refuses a
// database newer than this Wharf. version names the Wharf in the
// manifest.
//
// The snapshot is made in a private temporary file in stateDir (mode
// 0700, so nothing else reads it while it exists) and removed once the
// archive is written.
func Backup(ctx context.Context, stateDir, file, version string) (statedir.Manifest, error) {
	if _, err := os.Stat(stateDir); err != nil {
		return statedir.Manifest{}, fmt.Errorf("no state directory at %s", stateDir)
	}
	dir, err := statedir.Open(stateDir)
	if err != nil {
		return statedir.Manifest{}, err
	}
	defer dir.Close()
	db := dir.Path(statedir.Database)
	if _, err := os.Stat(db); err != nil {
		return statedir.Manifest{}, fmt.Errorf("no Wharf database in %s", dir.Root())
	}
	// Refused early, before the snapshot's work; WriteArchive refuses
	// again at the end, where it counts.
	if _, err := os.Lstat(file); err == nil {
		return statedir.Manifest{}, fmt.Errorf("%s already exists; a backup never replaces a file", file)
	}
	snap := dir.Path(".backup-" + rand.Text() + ".db")
	defer os.Remove(snap)
	m := statedir.Manifest{WharfVersion: version, Created: time.Now().UTC()}
	if m.Schema, err = sqlite.Snapshot(ctx, db, snap); err != nil {
		return statedir.Manifest{}, fmt.Errorf("backup: %w", err)
	}
	if err := dir.WriteArchive(file, m, snap); err != nil {
		return statedir.Manifest{}, fmt.Errorf("backup: %w", err)
	}
	m.Format = statedir.ArchiveFormat
	return m, nil
}

// Restore unpacks the backup archive file into stateDir, a new or empty
// state directory (made with mode 0700 when missing), under its lock, so
// no daemon serves it meanwhile and none can start before it is whole
// (statedir.Restore). The database is checked again (sqlite.Check) before
// it takes its place. `wharf serve` on stateDir then starts from it,
// migrating an older schema as any start does.
func Restore(ctx context.Context, file, stateDir string) (statedir.Manifest, error) {
	if _, err := os.Stat(file); err != nil {
		return statedir.Manifest{}, fmt.Errorf("restore: %w", err)
	}
	dir, err := statedir.Open(stateDir)
	if err != nil {
		return statedir.Manifest{}, err
	}
	defer dir.Close()
	if err := dir.Lock(); err != nil {
		if errors.Is(err, statedir.ErrLocked) {
			return statedir.Manifest{}, fmt.Errorf("refusing to restore: %w", err)
		}
		return statedir.Manifest{}, err
	}
	m, err := dir.Restore(file, func(db string) (int, error) { return sqlite.Check(ctx, db) })
	if err != nil {
		return statedir.Manifest{}, fmt.Errorf("restore: %w", err)
	}
	return m, nil
}
