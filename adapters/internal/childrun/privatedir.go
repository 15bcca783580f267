package childrun

import (
	"fmt"
	"os"
)

// PrivateDir creates dir with mode 0700 when missing and checks that it is
// a real directory closed to group and others: the sockets in a backend's
// runtime directory reach its sessions (and a host's master) without any
// other authentication.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("runtime directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("runtime directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("runtime directory %s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("runtime directory %s is open to group or others (mode %v); chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}
