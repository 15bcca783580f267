package statedir_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/statedir"
)

// source makes a state directory with a database snapshot and key files,
// and returns it with the snapshot's path.
func source(t *testing.T, keys ...string) (*statedir.Dir, string) {
	is := is.New(t)
	d, err := statedir.Open(filepath.Join(t.TempDir(), "state"))
	is.NoErr(err) // the state directory
	for _, k := range keys {
		is.NoErr(os.WriteFile(d.Path(k), []byte("key "+k), 0o600)) // a key file
	}
	snap := filepath.Join(t.TempDir(), "snap.db")
	is.NoErr(os.WriteFile(snap, []byte("the database"), 0o600)) // the snapshot
	return d, snap
}

// target opens and locks a new state directory to restore into.
func target(t *testing.T) *statedir.Dir {
	is := is.New(t)
	d, err := statedir.Open(filepath.Join(t.TempDir(), "restored"))
	is.NoErr(err)      // the new state directory
	is.NoErr(d.Lock()) // held while restoring
	t.Cleanup(func() { d.Close() })
	return d
}

// schemaOf is the check a test restore runs: every database has schema 7.
func schemaOf(string) (int, error) { return 7, nil }

// TestAnArchiveRestoresTheFilesItHolds writes an archive from a state
// directory with and without its key files, and restores each into a new
// one: the same files, private, and the manifest as written.
func TestAnArchiveRestoresTheFilesItHolds(t *testing.T) {
	for _, keys := range [][]string{{statedir.HubKey, statedir.PushKey}, {statedir.HubKey}, nil} {
		t.Run(strings.Join(append([]string{"db"}, keys...), "+"), func(t *testing.T) {
			is := is.New(t)
			src, snap := source(t, keys...)
			file := filepath.Join(t.TempDir(), "backup.tar")
			at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			is.NoErr(src.WriteArchive(file, statedir.Manifest{WharfVersion: "v9", Schema: 7, Created: at}, snap)) // written
			fi, err := os.Stat(file)
			is.NoErr(err)                                  // the archive is there
			is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
			left, err := filepath.Glob(filepath.Join(filepath.Dir(file), ".*"))
			is.NoErr(err)          // look for leftovers
			is.Equal(len(left), 0) // no temporary file is left beside it

			dst := target(t)
			m, err := dst.Restore(file, schemaOf)
			is.NoErr(err) // restored
			is.Equal(m, statedir.Manifest{Format: statedir.ArchiveFormat, WharfVersion: "v9", Schema: 7, Created: at,
				Files: append([]string{statedir.Database}, keys...)}) // the manifest as written
			entries, err := os.ReadDir(dst.Root())
			is.NoErr(err) // list what was restored
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
				fi, err := os.Lstat(dst.Path(e.Name()))
				is.NoErr(err)                                  // stat it
				is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
			}
			want := append([]string{statedir.Database, "wharf.lock"}, keys...)
			slices.Sort(want)
			is.Equal(names, want) // exactly the archive's files, beside the lock
			data, err := os.ReadFile(dst.Path(statedir.Database))
			is.NoErr(err)                          // read the database
			is.Equal(string(data), "the database") // as it was
			for _, k := range keys {
				data, err := os.ReadFile(dst.Path(k))
				is.NoErr(err)                    // read the key
				is.Equal(string(data), "key "+k) // as it was
			}
		})
	}
}

// TestAnArchiveNeverReplacesAFile writes an archive onto an existing
// file: refused, the file kept, no temporary file left.
func TestAnArchiveNeverReplacesAFile(t *testing.T) {
	is := is.New(t)
	src, snap := source(t, statedir.HubKey)
	file := filepath.Join(t.TempDir(), "backup.tar")
	is.NoErr(os.WriteFile(file, []byte("mine"), 0o644))                                    // a file already there
	err := src.WriteArchive(file, statedir.Manifest{Schema: 7, Created: time.Now()}, snap) // write onto it
	is.True(err != nil && strings.Contains(err.Error(), "already exists"))                 // refused
	data, err := os.ReadFile(file)
	is.NoErr(err)                  // still there
	is.Equal(string(data), "mine") // unchanged
	entries, err := os.ReadDir(filepath.Dir(file))
	is.NoErr(err)             // look for leftovers
	is.Equal(len(entries), 1) // none
}

// entry is one entry of a hand-made archive.
type entry struct {
	hdr  tar.Header
	body string
}

// handMade writes an archive of entries, a manifest first unless
// entries bring their own.
func handMade(t *testing.T, entries ...entry) string {
	is := is.New(t)
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg && h.Size == 0 {
			h.Size = int64(len(e.body))
		}
		h.Mode = 0o600
		is.NoErr(tw.WriteHeader(&h)) // the header
		if h.Typeflag == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			is.NoErr(err) // the body
		}
	}
	is.NoErr(tw.Close()) // the end
	file := filepath.Join(t.TempDir(), "hand.tar")
	is.NoErr(os.WriteFile(file, b.Bytes(), 0o600)) // written
	return file
}

func manifest(files ...string) entry {
	data, _ := json.Marshal(statedir.Manifest{Format: statedir.ArchiveFormat, Schema: 7, Files: files})
	return entry{tar.Header{Name: "manifest.json"}, string(data)}
}

// TestARestoreRefusesWhatNoBackupHolds restores archives that a backup
// never writes: each is refused, saying why, and the directory is left
// holding nothing but its lock.
func TestARestoreRefusesWhatNoBackupHolds(t *testing.T) {
	db := entry{tar.Header{Name: "wharf.db"}, "db"}
	for _, tc := range []struct {
		name    string
		entries []entry
		want    string
	}{
		{"a path out of the directory", []entry{manifest("wharf.db"), db, {tar.Header{Name: "../../evil"}, "x"}}, "no part of a Wharf backup"},
		{"a path into a subdirectory", []entry{manifest("wharf.db"), db, {tar.Header{Name: "sessions/x"}, "x"}}, "no part of a Wharf backup"},
		{"an absolute path", []entry{manifest("wharf.db"), {tar.Header{Name: "/etc/wharf.db"}, "x"}}, "no part of a Wharf backup"},
		{"a dot path", []entry{manifest("wharf.db"), {tar.Header{Name: "./wharf.db"}, "x"}}, "no part of a Wharf backup"},
		{"a symbolic link", []entry{manifest("wharf.db", "hub.key"), db, {tar.Header{Name: "hub.key", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, ""}}, "other than a regular file"},
		{"a hard link", []entry{manifest("wharf.db", "hub.key"), db, {tar.Header{Name: "hub.key", Typeflag: tar.TypeLink, Linkname: "wharf.db"}, ""}}, "other than a regular file"},
		{"a directory", []entry{manifest("wharf.db"), {tar.Header{Name: "wharf.db", Typeflag: tar.TypeDir}, ""}}, "other than a regular file"},
		{"a name twice", []entry{manifest("wharf.db"), db, db}, "twice"},
		{"a key above its bound", []entry{manifest("wharf.db", "hub.key"), db, {tar.Header{Name: "hub.key"}, strings.Repeat("k", 16<<10+1)}}, "more than"},
		{"no manifest", []entry{db}, "no manifest"},
		{"no database", []entry{manifest()}, "no database"},
		{"a newer format", []entry{{tar.Header{Name: "manifest.json"}, `{"format":2,"schema":7,"files":["wharf.db"]}`}, db}, "format 2"},
		{"a manifest with other fields", []entry{{tar.Header{Name: "manifest.json"}, `{"format":1,"schema":7,"files":["wharf.db"],"run":"x"}`}, db}, "cannot read"},
		{"files the manifest does not list", []entry{manifest("wharf.db"), db, {tar.Header{Name: "push.key"}, "k"}}, "differ"},
		{"a schema the manifest does not say", []entry{{tar.Header{Name: "manifest.json"}, `{"format":1,"schema":6,"files":["wharf.db"]}`}, db}, "manifest says 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			dst := target(t)
			_, err := dst.Restore(handMade(t, tc.entries...), schemaOf)
			is.True(err != nil)                             // refused
			is.True(strings.Contains(err.Error(), tc.want)) // saying why
			entries, err := os.ReadDir(dst.Root())
			is.NoErr(err)                                                   // look at the directory
			is.True(len(entries) == 1 && entries[0].Name() == "wharf.lock") // nothing but the lock is left
			_, err = os.Lstat(filepath.Join(dst.Root(), "..", "..", "evil"))
			is.True(errors.Is(err, os.ErrNotExist)) // nothing landed outside it
		})
	}
}

// TestARestoreRefusesAFailedCheck restores an archive whose database its
// check refuses: refused, nothing left.
func TestARestoreRefusesAFailedCheck(t *testing.T) {
	is := is.New(t)
	dst := target(t)
	file := handMade(t, manifest("wharf.db"), entry{tar.Header{Name: "wharf.db"}, "db"})
	_, err := dst.Restore(file, func(string) (int, error) { return 0, errors.New("the database failed its integrity check: x") })
	is.True(err != nil && strings.Contains(err.Error(), "integrity check")) // refused
	entries, err := os.ReadDir(dst.Root())
	is.NoErr(err)             // look at the directory
	is.Equal(len(entries), 1) // nothing but the lock is left
}

// TestARestoreNeedsAnEmptyLockedDirectory restores into a directory that
// holds a file, and into one this process did not lock: both refused.
func TestARestoreNeedsAnEmptyLockedDirectory(t *testing.T) {
	is := is.New(t)
	file := handMade(t, manifest("wharf.db"), entry{tar.Header{Name: "wharf.db"}, "db"})

	full := target(t)
	is.NoErr(os.WriteFile(full.Path("wharf.db"), []byte("live"), 0o600)) // a state directory in use
	_, err := full.Restore(file, schemaOf)
	is.True(err != nil && strings.Contains(err.Error(), "not empty")) // refused
	data, err := os.ReadFile(full.Path("wharf.db"))
	is.NoErr(err)                  // its database is still there
	is.Equal(string(data), "live") // untouched

	unlocked, err := statedir.Open(filepath.Join(t.TempDir(), "x"))
	is.NoErr(err) // a directory nobody locked
	_, err = unlocked.Restore(file, schemaOf)
	is.True(err != nil && strings.Contains(err.Error(), "not locked")) // refused
}
