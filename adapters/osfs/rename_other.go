//go:build !linux

package osfs

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/wharfhub/wharf/hub"
)

func renameNoReplace(oldpath, newpath string) error { return claimRename(oldpath, newpath) }

func rmdir(path string) error {
	err := syscall.Rmdir(path)
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return &fs.PathError{Op: "remove", Path: path, Err: hub.ErrNotEmpty}
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}
