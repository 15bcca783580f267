package statedir

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// The files a backup carries: the database and the key files the Hub
// keeps beside it, never in it (a copy of the database alone opens no
// sealed secret). The rest of a state directory is made again by the
// next start or belongs to one run (sockets, the lock, the commit
// counter).
const (
	Database = "wharf.db" // the SQLite database
	HubKey   = "hub.key"  // the key every credential's secret is sealed with
	PushKey  = "push.key" // the Hub's VAPID key for Web Push
)

// manifestEntry is the archive's first entry: its Manifest, as JSON.
const manifestEntry = "manifest.json"

// ArchiveFormat is the layout of the backup archives this Wharf writes
// and the only one it restores.
const ArchiveFormat = 1

// Bounds of what a restore reads of an archive, which may have been
// changed since it was written: a larger entry is refused before it is
// written out. A backup of a database above MaxDatabaseBytes is refused
// too, so every archive written restores.
const (
	MaxDatabaseBytes = 16 << 30
	maxKeyBytes      = 16 << 10
	maxManifestBytes = 4 << 10
)

// archiveEntries are the names an archive may hold, with their bounds.
var archiveEntries = map[string]int64{manifestEntry: maxManifestBytes, Database: MaxDatabaseBytes, HubKey: maxKeyBytes, PushKey: maxKeyBytes}

// Manifest says what made an archive.
type Manifest struct {
	Format       int       `json:"format"`       // ArchiveFormat
	WharfVersion string    `json:"wharfVersion"` // the Wharf that wrote it
	Schema       int       `json:"schema"`       // the database's schema version
	Created      time.Time `json:"created"`      // when it was written
	Files        []string  `json:"files"`        // the state directory's files it holds, in order
}

// WriteArchive writes a backup archive to path: m, the database snapshot
// at snapshot (a file nothing else writes) as Database, and the key files
// of d that exist. The archive is a tar file of mode 0600, made
// exclusively: it is written to a new file beside path, synced, then
// moved to path by an act that fails when path exists, so an existing
// file is never replaced and a crash leaves no partial archive at path.
//
// The key files are read after the snapshot was taken: a secret in it was
// sealed with a key already on disk, and a key file, once made, never
// changes, so the archive's keys open every secret of its database.
func (d *Dir) WriteArchive(path string, m Manifest, snapshot string) (err error) {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s already exists; a backup never replaces a file", path)
	}
	db, err := os.Open(snapshot)
	if err != nil {
		return err
	}
	defer db.Close()
	fi, err := db.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > MaxDatabaseBytes {
		return fmt.Errorf("the database holds %d bytes, more than a backup carries (%d)", fi.Size(), int64(MaxDatabaseBytes))
	}
	m.Format, m.Files = ArchiveFormat, []string{Database}
	keys := map[string][]byte{}
	defer func() {
		for _, k := range keys {
			clear(k)
		}
	}()
	for _, name := range []string{HubKey, PushKey} {
		data, err := readPrivate(d.Path(name), maxKeyBytes)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		keys[name] = data
		m.Files = append(m.Files, name)
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		return err
	}

	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+rand.Text()+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		f.Close()
		os.Remove(tmp)
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	entry := func(name string, size int64, r io.Reader) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: m.Created.Truncate(time.Second)}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		n, err := io.Copy(tw, io.LimitReader(r, size))
		if err == nil && n != size {
			err = fmt.Errorf("%s changed while it was archived", name)
		}
		return err
	}
	if err := entry(manifestEntry, int64(len(manifest)), bytes.NewReader(manifest)); err != nil {
		return err
	}
	if err := entry(Database, fi.Size(), db); err != nil {
		return err
	}
	for _, name := range m.Files[1:] {
		if err := entry(name, int64(len(keys[name])), bytes.NewReader(keys[name])); err != nil {
			return err
		}
	}
	if err := errors.Join(tw.Close(), bw.Flush(), f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := linkNew(tmp, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists; a backup never replaces a file", path)
		}
		return err
	}
	return syncDir(filepath.Dir(path))
}

// readPrivate reads the file at path strictly: a regular file of at most
// limit bytes, never through a symbolic link.
func readPrivate(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO at the path would block the open; it is then
	// refused as no regular file.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > limit:
		return nil, fmt.Errorf("%s holds %d bytes, more than %d", path, fi.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// syncDir makes the directory's entries durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// entryNames lists the names archiveEntries allows, for messages.
func entryNames() []string {
	names := make([]string, 0, len(archiveEntries))
	for n := range archiveEntries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
