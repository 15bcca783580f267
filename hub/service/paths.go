package service

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// absPath checks that p is an absolute path without NUL, no longer than
// the host accepts in any segment or whole, and returns it cleaned
// lexically. msg is the Invalid message for a bad p.
func absPath(p, msg string) (string, error) {
	if p == "" || !path.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return "", hub.Errorf(hub.Invalid, "%s", msg)
	}
	p = path.Clean(p)
	if len(p) > hub.MaxPathBytes {
		return "", hub.Errorf(hub.Invalid, "path is longer than %d bytes", hub.MaxPathBytes)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if len(seg) > hub.MaxFolderNameBytes {
			return "", hub.Errorf(hub.Invalid, "a path segment is longer than %d bytes", hub.MaxFolderNameBytes)
		}
	}
	return p, nil
}

// child returns the path of name (a checked FolderName) in dir, refusing
// a result longer than the host accepts.
func child(dir, name string) (string, error) {
	p := path.Join(dir, name)
	if len(p) > hub.MaxPathBytes {
		return "", hub.Errorf(hub.Invalid, "path is longer than %d bytes", hub.MaxPathBytes)
	}
	return p, nil
}

// atOrBelow reports whether p is root or inside it, component-wise:
// /srv/group-two is not below /srv/group.
func atOrBelow(p, root string) bool {
	if p == root || root == "/" {
		return true
	}
	return strings.HasPrefix(p, root+"/")
}

// rebase moves p from below oldRoot to below newRoot; p must be at or below
// oldRoot.
func rebase(p, oldRoot, newRoot string) string {
	return newRoot + strings.TrimPrefix(p, oldRoot)
}

// fsError maps a file-system failure to the public error of a folder
// operation. Host error text never reaches the message.
func fsError(err error, otherwise string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return hub.Wrap(hub.NotFound, err, "folder was not found")
	case errors.Is(err, fs.ErrPermission):
		return hub.Wrap(hub.Forbidden, err, "filesystem permission denied")
	case errors.Is(err, fs.ErrExist):
		return hub.Wrap(hub.Conflict, err, "destination already exists")
	case errors.Is(err, hub.ErrNotEmpty):
		return hub.Wrap(hub.Conflict, err, "folder is not empty")
	case errors.Is(err, hub.ErrNotDir):
		return hub.Wrap(hub.Invalid, err, "folder path is not a directory")
	}
	return hub.Wrap(hub.Internal, err, otherwise)
}

// directDir checks that p (absolute and clean) is a directory on pl's
// machine and not a symbolic link, then returns its canonical path: every
// symbolic link in its ancestors resolved. what names the field in
// messages.
func (pl place) directDir(p, what string) (string, error) {
	fi, err := pl.fs.Lstat(p)
	if err != nil {
		return "", fsError(err, "folder lookup failed")
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return "", hub.Errorf(hub.Invalid, "%s must name a direct non-symbolic-link directory", what)
	}
	if !fi.IsDir() {
		return "", hub.Errorf(hub.Invalid, "%s is not a directory", what)
	}
	canon, err := pl.fs.EvalSymlinks(p)
	if err != nil {
		return "", fsError(err, "folder lookup failed")
	}
	return canon, nil
}

// exists reports whether something (anything, links included) is at p on
// pl's machine. Errors other than absence count as present, so callers
// fail closed.
func (pl place) exists(p string) bool {
	_, err := pl.fs.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// isDir reports whether p is a directory that is not a symbolic link.
func (h *Hub) isDir(p string) bool { return h.here.isDir(p) }

// isDir is Hub.isDir on pl's machine.
func (pl place) isDir(p string) bool {
	fi, err := pl.fs.Lstat(p)
	return err == nil && fi.IsDir()
}

// reservations are the folder paths that operations in flight are
// changing. Two reservations conflict when one path equals, contains or is
// inside the other, so no two operations ever touch overlapping trees.
type reservations struct {
	mu    sync.Mutex
	paths map[string]int
}

var errReserved = hub.Errorf(hub.Conflict, "folder path is reserved by another operation")

// reserve takes every path or none. The release function is idempotent.
func (r *reservations) reserve(paths ...string) (release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for held := range r.paths {
		for _, p := range paths {
			if atOrBelow(p, held) || atOrBelow(held, p) {
				return nil, errReserved
			}
		}
	}
	if r.paths == nil {
		r.paths = map[string]int{}
	}
	for _, p := range paths {
		r.paths[p]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, p := range paths {
				if r.paths[p]--; r.paths[p] <= 0 {
					delete(r.paths, p)
				}
			}
		})
	}, nil
}
