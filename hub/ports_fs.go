package hub

import "io/fs"

// The folder port: the file-system operations on the Hub host.

// FS is the file-system surface the core needs for folders on the Hub
// host. Paths are absolute and already validated by the core.
//
// Errors satisfy errors.Is with fs.ErrNotExist (a path or its parent is
// absent), fs.ErrExist (the target already exists), fs.ErrPermission
// (the OS refused), ErrNotEmpty (a directory holds entries) or ErrNotDir. Other
// failures are returned as they are. Methods are safe for concurrent use;
// the core serializes conflicting mutations itself.
type FS interface {
	// Lstat describes path without following a final symbolic link.
	Lstat(path string) (fs.FileInfo, error)
	// ReadDir lists the entries of the directory path, sorted by name.
	ReadDir(path string) ([]fs.DirEntry, error)
	// Mkdir creates the directory path (mode 0755 before umask) and makes
	// the new entry durable. It never replaces anything: an existing path is
	// fs.ErrExist.
	Mkdir(path string) error
	// RenameNoReplace renames the directory oldpath to newpath atomically,
	// durably, and never replacing an existing newpath (fs.ErrExist).
	RenameNoReplace(oldpath, newpath string) error
	// RemoveEmpty removes the directory path only when it is empty
	// (ErrNotEmpty otherwise). A file or a symbolic link is ErrNotDir and
	// is left alone.
	RemoveEmpty(path string) error
	// EvalSymlinks returns path with every symbolic link resolved.
	EvalSymlinks(path string) (string, error)
	// Home returns the home directory of the Hub's OS user.
	Home() (string, error)
}
