package osfs

import (
	"io/fs"
	"os"
)

// claimRename renames a directory without replacing anything on systems
// without an atomic no-replace rename: creating newpath claims the name
// (mkdir fails if anything is there), and rename then replaces only that
// empty claim. A file source is refused because rename cannot replace a
// directory with a file.
func claimRename(oldpath, newpath string) error {
	fi, err := os.Lstat(oldpath)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "rename", Path: oldpath, Err: fs.ErrInvalid}
	}
	if err := os.Mkdir(newpath, 0o700); err != nil {
		return err
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		os.Remove(newpath)
		return err
	}
	return nil
}
