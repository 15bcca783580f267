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
	"slices"
	"strings"
	"syscall"
)

// Restore unpacks the backup archive at archive into d, which must be
// locked by this process (Lock: no daemon serves it meanwhile) and hold
// nothing but its lock. check is given the unpacked database before it
// takes its place, and returns its schema version; it refuses a damaged
// one (sqlite.Check, from the caller: this package knows no database).
//
// The archive is untrusted: an entry other than a regular file with one
// of the names a backup writes (no path, no link, no directory), a name
// twice, an entry above its bound, a manifest of another format or that
// disagrees with the database, or a missing database is refused before
// anything takes its place. Each file is written to a temporary name in
// d (mode 0600), synced, and moved to its name only once all of them
// passed; on failure d is left as it was.
func (d *Dir) Restore(archive string, check func(db string) (schema int, err error)) (Manifest, error) {
	if d.lock == nil {
		return Manifest{}, errors.New("restore: the state directory is not locked")
	}
	if err := d.empty(); err != nil {
		return Manifest{}, err
	}
	f, err := os.Open(archive)
	if err != nil {
		return Manifest{}, err
	}
	defer f.Close()

	tmp := map[string]string{} // entry name -> its temporary file
	defer func() {
		for _, p := range tmp {
			os.Remove(p)
		}
	}()
	var manifestData []byte
	tr := tar.NewReader(bufio.NewReaderSize(f, 1<<20))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Manifest{}, fmt.Errorf("%s is not a Wharf backup: %w", archive, err)
		}
		limit, known := archiveEntries[h.Name]
		switch {
		case !known:
			return Manifest{}, fmt.Errorf("%s holds %q, which is no part of a Wharf backup (only %s)", archive, h.Name, strings.Join(entryNames(), ", "))
		case h.Typeflag != tar.TypeReg:
			return Manifest{}, fmt.Errorf("%s holds %q as something other than a regular file", archive, h.Name)
		case tmp[h.Name] != "" || (h.Name == manifestEntry && manifestData != nil):
			return Manifest{}, fmt.Errorf("%s holds %q twice", archive, h.Name)
		case h.Size < 0 || h.Size > limit:
			return Manifest{}, fmt.Errorf("%s holds %q of %d bytes, more than %d", archive, h.Name, h.Size, limit)
		}
		if h.Name == manifestEntry {
			if manifestData, err = io.ReadAll(io.LimitReader(tr, limit)); err != nil {
				return Manifest{}, fmt.Errorf("%s: %w", archive, err)
			}
			continue
		}
		p := d.Path(".restore-" + rand.Text() + "-" + h.Name)
		tmp[h.Name] = p
		if err := writeNew(p, io.LimitReader(tr, limit), h.Size); err != nil {
			return Manifest{}, fmt.Errorf("restore %s: %w", h.Name, err)
		}
	}

	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(manifestData))
	dec.DisallowUnknownFields()
	switch {
	case manifestData == nil:
		return Manifest{}, fmt.Errorf("%s holds no manifest: it is not a Wharf backup", archive)
	case dec.Decode(&m) != nil:
		return Manifest{}, fmt.Errorf("%s holds a manifest this wharf cannot read", archive)
	case m.Format != ArchiveFormat:
		return Manifest{}, fmt.Errorf("%s is a backup of format %d; this wharf restores format %d", archive, m.Format, ArchiveFormat)
	case tmp[Database] == "":
		return Manifest{}, fmt.Errorf("%s holds no database", archive)
	}
	if len(m.Files) != len(tmp) || slices.ContainsFunc(m.Files, func(n string) bool { return tmp[n] == "" }) {
		return Manifest{}, fmt.Errorf("%s: its files differ from those its manifest lists", archive)
	}
	schema, err := check(tmp[Database])
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", archive, err)
	}
	if schema != m.Schema {
		return Manifest{}, fmt.Errorf("%s: its database has schema %d, its manifest says %d", archive, schema, m.Schema)
	}
	// Every file passed: each takes its name. None was there (d held
	// only its lock, and nothing else writes it while locked).
	var placed []string
	for name, p := range tmp {
		if err := linkNew(p, d.Path(name)); err != nil {
			for _, n := range placed {
				os.Remove(d.Path(n))
			}
			return Manifest{}, err
		}
		placed = append(placed, name)
		delete(tmp, name)
	}
	return m, syncDir(d.path)
}

// empty refuses a directory that holds anything but its lock.
func (d *Dir) empty() error {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != "wharf.lock" {
			return fmt.Errorf("refusing to restore into %s: it is not empty (it holds %s); restore into a new or empty directory", d.path, e.Name())
		}
	}
	return nil
}

// writeNew writes exactly size bytes of r to a new file at path (mode
// 0600) and syncs it.
func writeNew(path string, r io.Reader, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
