package gitexec

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// DefaultMaxAge bounds how long an inspection is reused when
// Options.MaxAge is zero.
const DefaultMaxAge = 10 * time.Second

// maxMemo bounds the inspections kept; past it the memo starts afresh.
const maxMemo = 4096

// The Hub inspects every listed folder again every couple of seconds, and
// each inspection costs two git processes; with 50 workspaces that was
// most of the Hub's CPU. Almost always nothing changed, and what git
// answers is decided by a handful of files, so an inspection is reused
// while their stamps are unchanged:
//
//   - every directory from the folder up to the root: creating or removing
//     a .git entry, or a bare repository's layout, in any of them changes
//     its modification time, and replacing one changes its inode;
//   - the checkout's .git entry (a linked worktree's names its git
//     directory), the git directory itself (HEAD is rewritten by renaming
//     a lock file into it), its HEAD, and its reftable directory, which
//     holds the branch in repositories using reftable.
//
// Stamps compare inode, size, and modification and change times. A change
// they could miss (two renames within one timestamp tick that reuse an
// inode, a change between git's reading and the stamping) is bounded by
// MaxAge, after which git runs again whatever the stamps say.
type inspection struct {
	repo   hub.Repository
	gitDir string
	stamps []stamp
	at     time.Time
}

type stamp struct {
	ino, size    int64
	mtime, ctime int64 // nanoseconds
	missing      bool
}

type memo struct {
	mu sync.Mutex
	m  map[string]inspection
}

func (m *memo) get(dir string) (inspection, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	in, ok := m.m[dir]
	return in, ok
}

func (m *memo) put(dir string, in inspection) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxMemo {
		m.m = map[string]inspection{}
	}
	m.m[dir] = in
}

func (m *memo) forget(dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, dir)
}

// stampsOf stamps the files that decide the inspection of dir (canonical)
// answered with repo and gitDir (empty when in no repository).
func stampsOf(dir string, repo hub.Repository, gitDir string) []stamp {
	var paths []string
	for d := dir; ; d = filepath.Dir(d) {
		paths = append(paths, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	if repo.TopLevel != "" {
		paths = append(paths, filepath.Join(repo.TopLevel, ".git"), gitDir,
			filepath.Join(gitDir, "HEAD"), filepath.Join(gitDir, "reftable"))
	}
	out := make([]stamp, len(paths))
	for i, p := range paths {
		out[i] = stampOf(p)
	}
	return out
}

// weakStamp is never equal to another stamp, not even itself.
var weakStamp = stamp{ino: -1}

func sameStamps(a, b []stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] || a[i].ino == -1 {
			return false
		}
	}
	return true
}
