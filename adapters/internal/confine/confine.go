// Package confine is the workspace boundary: the one way the workspace
// child opens a file or folder of a workspace on an agent's behalf
// (fs/read_text_file, fs/write_text_file, a terminal's working folder).
//
// The rule is that a path is resolved and opened in one step, relative
// to a descriptor of the workspace folder, so what was checked is what is
// opened: nothing is looked up by name twice.
//
//   - On Linux the kernel does it: openat2(2) with RESOLVE_BENEATH and
//     RESOLVE_NO_MAGICLINKS refuses any step out of the folder (`..`
//     above it, an absolute link, a link leading out, /proc's magic links)
//     and detects a rename racing the lookup (EAGAIN, retried a bounded
//     number of times).
//   - Elsewhere, and where openat2 is missing (kernels before 5.6, seccomp
//     profiles that refuse it), a walk does the same: one openat(2) with
//     O_NOFOLLOW per part from the folder's descriptor; a symbolic link is
//     followed only by reading it and splicing its target into the parts
//     left, and `..` pops a stack of descriptors that never goes above the
//     folder. Links may not be absolute; at most 40 are followed.
//
// Both follow links in the folders of a path as long as they stay inside
// (a repository's `docs -> documentation`, pnpm's node_modules), and both
// refuse, never follow, a link that is the last part of a file's path:
// that is how a dangling `docs/todo.md -> ../../outside/x` would have been
// created outside. A folder's last link is followed (OpenDir).
//
// Files are read and written only when regular and with one link: a hard
// link's other name may be outside the folder (ErrHardLink), and a FIFO
// would block the reader forever. Reads are bounded. A write never writes
// into an existing file: the content goes to a new file in the same
// folder descriptor, is synced, and is renamed over the name (renameat),
// keeping the old file's permission bits; a reader or a crash sees the old
// content or the new, and a link swapped in at the last moment is
// replaced, not written through.
//
// Errors are *fs.PathError values naming the path relative to the
// workspace folder (never a host path) and wrapping one of this package's
// sentinel errors, or fs.ErrNotExist.
package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The refusals of the boundary.
var (
	ErrNotAbsolute = errors.New("the path is not absolute")
	ErrOutside     = errors.New("the path is outside the workspace folder")
	ErrSymlink     = errors.New("the path ends in a symbolic link, or loops through links")
	ErrHardLink    = errors.New("the file has more than one link")
	ErrNotRegular  = errors.New("the path is not a regular file")
	ErrNotDir      = errors.New("a part of the path is not a folder")
	ErrTooLarge    = errors.New("the file is too large")
	ErrRaced       = errors.New("the folder kept changing while the path was opened")
	ErrTooLong     = errors.New("the path is too long")
)

// maxPath bounds a path given to the boundary (PATH_MAX).
const maxPath = 4096

// A resolver opens rel beneath the folder dirfd with flags (and mode,
// when creating), never following rel's last part when it is a link.
// It returns the kernel's errors: EXDEV for a way out, ELOOP for a last
// link, ENOENT, ENOTDIR…
type resolver func(dirfd int, rel string, flags int, mode uint32) (int, error)

// Root is a workspace folder and the boundary around it. A Root holds no
// descriptor: each operation opens the folder anew, so one that is moved
// or replaced is seen as it is now.
type Root struct {
	dir     string
	resolve resolver
}

// New returns the boundary of the folder dir, an absolute path. Links
// in dir itself are followed: the folder is what the Hub was given.
func New(dir string) *Root {
	return &Root{dir: filepath.Clean(dir), resolve: defaultResolver()}
}

// Rel maps an absolute path onto a path relative to the folder ("." for
// the folder itself), lexically: `..` is resolved before anything is
// looked up, so `WS/../x` is outside. A path through the folder's own
// resolved location (the agent may have resolved it) is taken too.
func (r *Root) Rel(path string) (string, error) {
	if len(path) > maxPath {
		return "", &fs.PathError{Op: "confine", Path: "", Err: ErrTooLong}
	}
	if !filepath.IsAbs(path) {
		return "", &fs.PathError{Op: "confine", Path: path, Err: ErrNotAbsolute}
	}
	clean := filepath.Clean(path)
	if rel, ok := under(clean, r.dir); ok {
		return rel, nil
	}
	if real, err := filepath.EvalSymlinks(r.dir); err == nil && real != r.dir {
		if rel, ok := under(clean, real); ok {
			return rel, nil
		}
	}
	return "", &fs.PathError{Op: "confine", Path: "", Err: ErrOutside}
}

// under says whether the clean path is base or inside it, and where.
func under(path, base string) (string, bool) {
	if path == base {
		return ".", true
	}
	prefix := base + string(filepath.Separator)
	if base == string(filepath.Separator) {
		prefix = base
	}
	rest, ok := strings.CutPrefix(path, prefix)
	return rest, ok
}

// openRoot opens the workspace folder.
func (r *Root) openRoot() (int, error) {
	fd, err := unix.Open(r.dir, dirFlags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: ".", Err: err}
	}
	return fd, nil
}

// open resolves rel beneath the folder and opens it with flags.
func (r *Root) open(rel string, flags int, mode uint32) (int, error) {
	rootfd, err := r.openRoot()
	if err != nil {
		return -1, err
	}
	defer unix.Close(rootfd)
	fd, err := r.resolve(rootfd, rel, flags, mode)
	if err != nil {
		return -1, pathError("open", rel, err)
	}
	return fd, nil
}

// ReadFile reads the regular, singly linked file rel, refusing one of
// more than limit bytes (ErrTooLarge).
func (r *Root) ReadFile(rel string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer; it is then
	// refused as not regular.
	fd, err := r.open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, pathError("stat", rel, err)
	}
	if err := checkFile(&st); err != nil {
		return nil, pathError("read", rel, err)
	}
	if st.Size > limit {
		return nil, pathError("read", rel, ErrTooLarge)
	}
	// The size is a hint: the file may grow while it is read.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, pathError("read", rel, err)
	}
	if int64(len(b)) > limit {
		return nil, pathError("read", rel, ErrTooLarge)
	}
	return b, nil
}

// checkFile refuses what is not a regular file with one link.
func checkFile(st *unix.Stat_t) error {
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return ErrSymlink
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return ErrNotRegular
	case st.Nlink > 1:
		return ErrHardLink
	}
	return nil
}

// OpenDir opens the folder rel, following a link that is its last part
// when the link stays inside (a working folder, not a file's content).
// Close it once done.
func (r *Root) OpenDir(rel string) (*Folder, error) {
	fd, err := r.open(rel+"/.", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Folder{f: os.NewFile(uintptr(fd), rel), path: filepath.Join(r.dir, rel)}, nil
}

// Folder is an open folder of the workspace.
type Folder struct {
	f    *os.File
	path string
}

// Path is the folder's path as the workspace names it: for people and
// for $PWD, not for opening (it may have changed since).
func (d *Folder) Path() string { return d.path }

// Close closes the folder.
func (d *Folder) Close() error { return d.f.Close() }

// pathError names rel in err, turning the kernel's answers into the
// boundary's refusals.
func pathError(op, rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: rel, Err: refusal(err)}
}

// refusal maps an errno onto the boundary's sentinel errors.
func refusal(err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case unix.EXDEV:
		return ErrOutside
	case unix.ELOOP, unix.EMLINK: // EMLINK: FreeBSD's O_NOFOLLOW
		return ErrSymlink
	case unix.ENOTDIR:
		return ErrNotDir
	case unix.EAGAIN:
		return ErrRaced
	case unix.ENAMETOOLONG:
		return ErrTooLong
	}
	return errno
}
