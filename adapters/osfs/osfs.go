// Package osfs implements hub.FS over the operating system's file system.
package osfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.FS = FS{}

// FS is the host file system.
type FS struct{}

// Lstat wraps os.Lstat.
func (FS) Lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }

// ReadDir wraps os.ReadDir.
func (FS) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// Mkdir creates a directory and syncs its parent so the entry survives a
// crash.
func (FS) Mkdir(path string) error {
	if err := os.Mkdir(path, 0o755); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// RenameNoReplace renames a directory without ever replacing newpath.
func (FS) RenameNoReplace(oldpath, newpath string) error {
	if err := renameNoReplace(oldpath, newpath); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(newpath)); err != nil {
		return err
	}
	return syncDir(filepath.Dir(oldpath))
}

// RemoveEmpty removes an empty directory, refusing files and links.
func (FS) RemoveEmpty(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "remove", Path: path, Err: hub.ErrNotDir}
	}
	if err := rmdir(path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// EvalSymlinks wraps filepath.EvalSymlinks.
func (FS) EvalSymlinks(path string) (string, error) { return filepath.EvalSymlinks(path) }

// Home wraps os.UserHomeDir.
func (FS) Home() (string, error) { return os.UserHomeDir() }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
