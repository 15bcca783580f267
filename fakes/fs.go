package fakes

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.FS = (*FS)(nil)

// FS is a hub.FS over an in-memory tree of directories, files and symbolic
// links. Before, when set, is called ahead of every mutation with the
// operation name ("mkdir", "rename", "remove") and its path; an error it
// returns fails the mutation with nothing changed, which is how tests crash
// the Hub between two steps.
type FS struct {
	mu     sync.Mutex
	root   *node
	home   string
	Before func(op, path string) error
}

type node struct {
	mode     fs.FileMode // fs.ModeDir, fs.ModeSymlink or 0 (file)
	target   string      // symlink target
	children map[string]*node
}

// NewFS returns an FS holding only the directory home (and its ancestors).
func NewFS(home string) *FS {
	f := &FS{root: &node{mode: fs.ModeDir, children: map[string]*node{}}, home: home}
	f.MkdirAll(home)
	return f
}

// MkdirAll creates dir and its missing ancestors.
func (f *FS) MkdirAll(dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.root
	for _, part := range split(dir) {
		c := n.children[part]
		if c == nil {
			c = &node{mode: fs.ModeDir, children: map[string]*node{}}
			n.children[part] = c
		}
		n = c
	}
}

// WriteFile creates an empty regular file at p; its parent must exist.
func (f *FS) WriteFile(p string) error { return f.add(p, &node{}) }

// Symlink creates a symbolic link at p pointing to target.
func (f *FS) Symlink(target, p string) error {
	return f.add(p, &node{mode: fs.ModeSymlink, target: target})
}

func (f *FS) add(p string, n *node) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, name, err := f.parent(p)
	if err != nil {
		return err
	}
	if parent.children[name] != nil {
		return &fs.PathError{Op: "create", Path: p, Err: fs.ErrExist}
	}
	parent.children[name] = n
	return nil
}

func split(p string) []string {
	p = strings.Trim(path.Clean(p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// lookup finds p as the operating system would: symbolic links in its
// ancestors are followed, one in its last element is not.
func (f *FS) lookup(p string) (*node, error) {
	p = path.Clean(p)
	if p == "/" {
		return f.root, nil
	}
	dir, err := f.eval(path.Dir(p))
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
	}
	return f.literal(path.Join(dir, path.Base(p)))
}

// literal finds p following no symbolic link at all.
func (f *FS) literal(p string) (*node, error) {
	n := f.root
	for _, part := range split(p) {
		if n.mode != fs.ModeDir {
			return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
		}
		n = n.children[part]
		if n == nil {
			return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
		}
	}
	return n, nil
}

func (f *FS) parent(p string) (*node, string, error) {
	dir, name := path.Split(path.Clean(p))
	var n *node
	resolved, err := f.eval(dir)
	if err == nil {
		n, err = f.literal(resolved)
	}
	if err != nil || n.mode != fs.ModeDir || name == "" {
		return nil, "", &fs.PathError{Op: "lookup", Path: p, Err: fs.ErrNotExist}
	}
	return n, name, nil
}

func (f *FS) before(op, p string) error {
	if f.Before == nil {
		return nil
	}
	return f.Before(op, p)
}

// Lstat describes p.
func (f *FS) Lstat(p string) (fs.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(p)
	if err != nil {
		return nil, err
	}
	return info{name: path.Base(p), mode: n.mode}, nil
}

// ReadDir lists a directory, sorted by name.
func (f *FS) ReadDir(p string) ([]fs.DirEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(p)
	if err != nil {
		return nil, err
	}
	if n.mode != fs.ModeDir {
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: hub.ErrNotDir}
	}
	var es []fs.DirEntry
	for name, c := range n.children {
		es = append(es, fs.FileInfoToDirEntry(info{name: name, mode: c.mode}))
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Name() < es[j].Name() })
	return es, nil
}

// Mkdir creates a directory, never replacing anything.
func (f *FS) Mkdir(p string) error {
	if err := f.before("mkdir", p); err != nil {
		return err
	}
	return f.add(p, &node{mode: fs.ModeDir, children: map[string]*node{}})
}

// RenameNoReplace moves a directory, never replacing anything.
func (f *FS) RenameNoReplace(oldpath, newpath string) error {
	if err := f.before("rename", oldpath); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	op, oname, err := f.parent(oldpath)
	if err != nil || op.children[oname] == nil {
		return &fs.PathError{Op: "rename", Path: oldpath, Err: fs.ErrNotExist}
	}
	np, nname, err := f.parent(newpath)
	if err != nil {
		return err
	}
	if np.children[nname] != nil {
		return &fs.PathError{Op: "rename", Path: newpath, Err: fs.ErrExist}
	}
	if c := path.Clean(oldpath); strings.HasPrefix(path.Clean(newpath)+"/", c+"/") {
		return &fs.PathError{Op: "rename", Path: newpath, Err: errors.New("destination inside source")}
	}
	np.children[nname] = op.children[oname]
	delete(op.children, oname)
	return nil
}

// RemoveEmpty removes an empty directory.
func (f *FS) RemoveEmpty(p string) error {
	if err := f.before("remove", p); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, name, err := f.parent(p)
	if err != nil {
		return err
	}
	n := parent.children[name]
	switch {
	case n == nil:
		return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
	case n.mode != fs.ModeDir:
		return &fs.PathError{Op: "remove", Path: p, Err: hub.ErrNotDir}
	case len(n.children) > 0:
		return &fs.PathError{Op: "remove", Path: p, Err: hub.ErrNotEmpty}
	}
	delete(parent.children, name)
	return nil
}

// EvalSymlinks resolves every symbolic link in p.
func (f *FS) EvalSymlinks(p string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.eval(p)
}

// eval resolves every symbolic link in p; the caller holds f.mu.
func (f *FS) eval(p string) (string, error) {
	resolved := "/"
	rest := split(p)
	for hops := 0; len(rest) > 0; {
		next := path.Join(resolved, rest[0])
		rest = rest[1:]
		n, err := f.literal(next)
		if err != nil {
			return "", err
		}
		if n.mode == fs.ModeSymlink {
			if hops++; hops > 40 {
				return "", &fs.PathError{Op: "evalsymlinks", Path: p, Err: errors.New("too many links")}
			}
			t := n.target
			if !path.IsAbs(t) {
				t = path.Join(resolved, t)
			}
			rest = append(split(t), rest...)
			resolved = "/"
			continue
		}
		resolved = next
	}
	return resolved, nil
}

// Home returns the home directory given to NewFS.
func (f *FS) Home() (string, error) { return f.home, nil }

type info struct {
	name string
	mode fs.FileMode
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return 0 }
func (i info) Mode() fs.FileMode  { return i.mode | 0o755 }
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.mode == fs.ModeDir }
func (i info) Sys() any           { return nil }
