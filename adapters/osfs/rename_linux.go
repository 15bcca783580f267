package osfs

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/wharfhub/wharf/hub"
)

// renameNoReplace uses the kernel's RENAME_NOREPLACE. A file system that
// does not support it (EINVAL) falls back to claiming the name first.
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL):
		return claimRename(oldpath, newpath)
	default:
		return &fs.PathError{Op: "rename", Path: newpath, Err: err}
	}
}

func rmdir(path string) error {
	err := unix.Rmdir(path)
	if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "remove", Path: path, Err: hub.ErrNotEmpty}
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}
