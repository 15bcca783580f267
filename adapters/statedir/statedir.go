// Package statedir opens Wharf's private state directory and holds the
// lock that keeps a second daemon from serving the same state.
package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Default returns the default state directory: $XDG_STATE_HOME/wharf, else
// ~/.local/state/wharf.
func Default(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "wharf"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("no state directory: set --state-dir or HOME")
		}
	}
	return filepath.Join(home, ".local", "state", "wharf"), nil
}

// Dir is an opened state directory.
type Dir struct {
	path string
	lock *os.File
}

// Open creates the directory (mode 0700) when it is missing and checks it:
// a real directory, not a symbolic link, owned by this user, and closed to
// group and others. Its canonical path is used from then on.
func Open(path string) (*Dir, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = abs
	}
	if err := os.MkdirAll(path, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return nil, fmt.Errorf("refusing state directory %s: it is a symbolic link", path)
	case !fi.IsDir():
		return nil, fmt.Errorf("refusing state directory %s: not a directory", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("refusing state directory %s: group or others may access it (mode %o); run: chmod 700 %s",
			path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("refusing state directory %s: owned by another user", path)
	}
	canon, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return &Dir{path: canon}, nil
}

// Path returns the path of name inside the directory.
func (d *Dir) Path(name string) string { return filepath.Join(d.path, name) }

// Root returns the directory's canonical path.
func (d *Dir) Root() string { return d.path }

// ErrLocked reports that another process holds the state directory.
var ErrLocked = errors.New("state directory is in use")

// Lock takes the directory's exclusive lock for the life of the process
// (or until Close). The kernel releases it when the process dies, however
// it dies. A second Lock, from any process, fails with ErrLocked and says
// which process holds it.
func (d *Dir) Lock() error {
	name := d.Path("wharf.lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(holder))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return fmt.Errorf("%w: another wharf (pid %s) is serving from %s", ErrLocked, pid, d.path)
		}
		return fmt.Errorf("lock %s: %w", name, err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	d.lock = f
	return nil
}

// Close releases the lock, if held.
func (d *Dir) Close() error {
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close()
	d.lock = nil
	return err
}
