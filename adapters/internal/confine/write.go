package confine

import (
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// newFileMode is the mode of a file the boundary creates, before the
// process's umask.
const newFileMode = 0o644

// newDirMode is the mode of a folder it creates, before the umask.
const newDirMode = 0o755

// WriteFile replaces the content of the file rel with data, creating it
// and its missing folders. The file, when it exists, must be regular with
// one link; its permission bits are kept. The content goes to a new file
// beside it, synced, then renamed over rel: the old content or the new,
// never a mix, and never through a link.
func (r *Root) WriteFile(rel string, data []byte) error {
	parent, name := filepath.Split(rel)
	if name == "." || name == ".." || name == "" {
		return &fs.PathError{Op: "write", Path: rel, Err: ErrNotRegular}
	}
	dirfd, err := r.mkdirAll(strings.TrimSuffix(parent, "/"))
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)

	perm, keep := uint32(newFileMode), false
	var st unix.Stat_t
	switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		if err := checkFile(&st); err != nil {
			return &fs.PathError{Op: "write", Path: rel, Err: err}
		}
		perm, keep = uint32(st.Mode&0o777), true
	case err != unix.ENOENT:
		return pathError("write", rel, err)
	}

	tmp := ".wharf-" + rand.Text() + ".tmp"
	mode := perm
	if keep {
		mode = 0o600 // until fchmod: never more open than the file it replaces
	}
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return pathError("write", rel, err)
	}
	if err := fill(fd, data, perm, keep); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return pathError("write", rel, err)
	}
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return pathError("write", rel, err)
	}
	// The rename is durable once the folder is synced. The content is in
	// place either way, so a failure here is not the agent's to see.
	_ = unix.Fsync(dirfd)
	return nil
}

// fill writes data to the new file fd, gives it perm when it replaces a
// file, syncs and closes it.
func fill(fd int, data []byte, perm uint32, keep bool) error {
	f := os.NewFile(uintptr(fd), "")
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if keep {
		if err := f.Chmod(fs.FileMode(perm)); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// mkdirAll opens the folder rel (for writing into it), creating its
// missing parts. The parts that exist are resolved beneath the root like
// any path; each one made is opened with O_NOFOLLOW from the one before,
// so a link put in its place is refused, not followed.
func (r *Root) mkdirAll(rel string) (int, error) {
	if rel == "" {
		rel = "."
	}
	rootfd, err := r.openRoot()
	if err != nil {
		return -1, err
	}
	defer unix.Close(rootfd)
	open := func(prefix string) (int, error) {
		return r.resolve(rootfd, prefix+"/.", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	}
	fd, err := open(rel)
	if err != unix.ENOENT {
		if err != nil {
			return -1, pathError("open", rel, err)
		}
		return fd, nil
	}
	// Find the longest part that exists, then make the rest.
	parts := strings.Split(rel, "/")
	have := len(parts) - 1
	for ; have > 0; have-- {
		fd, err = open(strings.Join(parts[:have], "/"))
		if err == nil {
			break
		}
		if err != unix.ENOENT {
			return -1, pathError("open", rel, err)
		}
	}
	if have == 0 {
		if fd, err = open("."); err != nil {
			return -1, pathError("open", ".", err)
		}
	}
	for _, name := range parts[have:] {
		if name == "." || name == ".." || name == "" {
			unix.Close(fd)
			return -1, &fs.PathError{Op: "mkdir", Path: rel, Err: ErrNotDir}
		}
		if err := unix.Mkdirat(fd, name, newDirMode); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return -1, pathError("mkdir", rel, err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, pathError("mkdir", rel, err)
		}
		fd = next
	}
	return fd, nil
}
