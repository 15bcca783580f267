package statedir

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// linkNew moves the file at tmp to path unless path exists (then an error
// wrapping os.ErrExist, and tmp stays). Linux renames without replacing;
// a file system that cannot (EINVAL) gets a hard link instead, which
// fails the same way when path exists.
func linkNew(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkThenRemove(tmp, path)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	return nil
}
