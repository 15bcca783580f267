package docfeed

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// entry is one indexed file.
type entry struct {
	meta *documentMeta
	stat fileStat
}

// change is one pending file change: an upsert (meta set) or a removal.
type change struct {
	rel  string
	meta *documentMeta // nil for a removal
	// live marks an edit observed after the initial scan (not a re-index),
	// which may become the update's changedId.
	live bool
}

// index is the file-system side of a feed: what is on disk and watched.
// Only the feed's loop goroutine uses it, so it has no lock; subscribers
// see the published model (state) instead.
type index struct {
	root    string
	repo    repoInfo
	git     *gitRunner
	watcher *fsnotify.Watcher
	seq     *atomic.Int64
	files   map[string]*entry // by relative path
	watched map[string]uint64 // watched directories by relative path: their inode
	// watchFailure is why a directory could not be watched (the inotify
	// limit, typically), reported through discovery; "" when none.
	watchFailure string
}

func (ix *index) abs(rel string) string {
	if rel == "" {
		return ix.root
	}
	return filepath.Join(ix.root, filepath.FromSlash(rel))
}

// rel maps an event's absolute path into the root; ok is false outside it.
func (ix *index) rel(abs string) (string, bool) {
	if abs == ix.root {
		return "", true
	}
	r, ok := strings.CutPrefix(abs, ix.root+string(filepath.Separator))
	if !ok || r == "" {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (ix *index) scanner(into map[string]uint64) *scanner {
	return &scanner{root: ix.root, repo: ix.repo, git: ix.git, watch: func(rel string) {
		ix.watch(rel, into)
	}}
}

// watch adds a directory watch and records it with its inode in into. A
// directory gone meanwhile is skipped; running out of watches is
// remembered for discovery (the tree is then only partly live).
func (ix *index) watch(rel string, into map[string]uint64) {
	abs := ix.abs(rel)
	fi, err := os.Lstat(abs)
	if err != nil || !fi.IsDir() {
		return
	}
	if err := ix.watcher.Add(abs); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			ix.watchFailure = "not every folder can be watched: the inotify watch limit " +
				"(fs.inotify.max_user_watches) is reached"
		}
		return
	}
	into[rel] = statOf(fi).ino
}

// rebuild indexes the whole root again (the initial scan and every
// recovery). Files whose stat is unchanged keep their kind and revision
// without being read; new or changed ones take new revisions. Watches move
// to the new directory set without a gap: new ones are added before old
// ones are dropped.
func (ix *index) rebuild(ctx context.Context, repo repoInfo) error {
	ix.repo = repo
	ix.watchFailure = ""
	watched := make(map[string]uint64, len(ix.watched))
	l, err := ix.scanner(watched).scan(ctx, nil)
	if err != nil {
		// Keep the old watches: they still see changes while we retry.
		for rel := range watched {
			if _, ok := ix.watched[rel]; !ok {
				ix.watcher.Remove(ix.abs(rel))
			}
		}
		return err
	}
	for rel := range ix.watched {
		if _, ok := watched[rel]; !ok {
			ix.watcher.Remove(ix.abs(rel))
		}
	}
	ix.watched = watched

	probes := make([]probe, len(l.files))
	for i, rel := range l.files {
		probes[i] = probe{rel: rel, abs: ix.abs(rel), reuse: ix.files[rel]}
	}
	if err := classifyAll(ctx, probes); err != nil {
		return err
	}
	files := make(map[string]*entry, len(probes))
	slices.SortFunc(probes, func(a, b probe) int { return strings.Compare(a.rel, b.rel) })
	for i := range probes {
		p := &probes[i]
		if !p.ok {
			continue
		}
		if p.reuse != nil && p.reuse.stat == p.stat {
			files[p.rel] = p.reuse
			continue
		}
		files[p.rel] = ix.entryFor(p)
	}
	ix.files = files
	return nil
}

// entryFor makes the entry of a classified probe with the next revision.
func (ix *index) entryFor(p *probe) *entry {
	return &entry{stat: p.stat, meta: &documentMeta{
		ID:           p.abs,
		Name:         path.Base(p.rel),
		RelativePath: p.rel,
		MtimeMs:      p.stat.mtime / 1e6,
		RootID:       ix.root,
		Kind:         p.kind,
		Revision:     ix.seq.Add(1),
	}}
}

// all returns every indexed file as a non-live upsert, by path.
func (ix *index) all() []change {
	out := make([]change, 0, len(ix.files))
	for rel, e := range ix.files {
		out = append(out, change{rel: rel, meta: e.meta})
	}
	slices.SortFunc(out, func(a, b change) int { return strings.Compare(a.rel, b.rel) })
	return out
}

// needsRebuild reports events that change what is indexed as a whole: an
// ignore file (in a repository), a .git appearing or going away, or the
// root itself being removed or replaced.
func (ix *index) needsRebuild(dirty map[string]fsnotify.Op) bool {
	for abs := range dirty {
		rel, ok := ix.rel(abs)
		if !ok {
			continue
		}
		base := path.Base(rel)
		switch {
		case rel == "":
			if fi, err := os.Lstat(ix.root); err != nil || !fi.IsDir() || statOf(fi).ino != ix.watched[""] {
				return true
			}
		case base == ".git", ix.repo.isGit() && base == ".gitignore":
			return true
		}
	}
	return false
}

// resolve turns the paths events named into changes, by looking at the
// disk now (events only say where to look): known files that changed or
// vanished, directories that vanished (with everything below), and new
// files and directories that the ignore rules admit (new directories are
// watched and listed). Every upsert takes a new revision, in path order.
// A Write or Create event always makes an upsert, even with an unchanged
// stat: two saves within the file system's timestamp granularity are
// still two saves.
func (ix *index) resolve(ctx context.Context, dirty map[string]fsnotify.Op) ([]change, error) {
	ops := make(map[string]fsnotify.Op, len(dirty))
	for abs, op := range dirty {
		if rel, ok := ix.rel(abs); ok && rel != "" {
			ops[rel] |= op
		}
	}
	out := map[string]change{}

	// Directories that are gone or were replaced lose their watches and
	// their files first, so a replacement is then listed afresh.
	var gone []string
	for rel := range ops {
		if ino, ok := ix.watched[rel]; ok {
			if fi, err := os.Lstat(ix.abs(rel)); err != nil || !fi.IsDir() || statOf(fi).ino != ino {
				gone = append(gone, rel)
			}
		}
	}
	for _, c := range ix.dropDirs(gone) {
		out[c.rel] = c
	}

	var probes []probe
	var specs []string
	for rel, op := range ops {
		fi, err := os.Lstat(ix.abs(rel))
		e := ix.files[rel]
		switch {
		case e != nil && (err != nil || !fi.Mode().IsRegular()):
			delete(ix.files, rel)
			out[rel] = change{rel: rel}
		case e != nil:
			if op.Has(fsnotify.Write) || op.Has(fsnotify.Create) || statOf(fi) != e.stat {
				probes = append(probes, probe{rel: rel, abs: ix.abs(rel)})
			}
		case err != nil:
		case fi.Mode().IsRegular():
			specs = append(specs, rel)
		case fi.IsDir():
			if _, ok := ix.watched[rel]; !ok {
				specs = append(specs, rel)
			}
		}
	}
	if len(specs) > 0 {
		slices.Sort(specs)
		l, err := ix.scanner(ix.watched).scan(ctx, specs)
		if err != nil {
			return nil, err
		}
		probed := make(map[string]bool, len(probes))
		for _, p := range probes {
			probed[p.rel] = true
		}
		for _, rel := range l.files {
			if !probed[rel] {
				probed[rel] = true
				probes = append(probes, probe{rel: rel, abs: ix.abs(rel)})
			}
		}
	}

	if err := classifyAll(ctx, probes); err != nil {
		return nil, err
	}
	slices.SortFunc(probes, func(a, b probe) int { return strings.Compare(a.rel, b.rel) })
	for i := range probes {
		p := &probes[i]
		switch {
		case p.ok:
			e := ix.entryFor(p)
			ix.files[p.rel] = e
			out[p.rel] = change{rel: p.rel, meta: e.meta, live: true}
		case ix.files[p.rel] != nil:
			delete(ix.files, p.rel)
			out[p.rel] = change{rel: p.rel}
		}
	}
	changes := make([]change, 0, len(out))
	for _, c := range out {
		changes = append(changes, c)
	}
	slices.SortFunc(changes, func(a, b change) int { return strings.Compare(a.rel, b.rel) })
	return changes, nil
}

// dropDirs forgets directories that are gone: their watches and those
// below, and every file below them, returned as removals.
func (ix *index) dropDirs(gone []string) []change {
	if len(gone) == 0 {
		return nil
	}
	set := make(map[string]bool, len(gone))
	for _, d := range gone {
		set[d] = true
	}
	under := func(rel string) bool {
		for d := rel; d != "." && d != ""; d = path.Dir(d) {
			if set[d] {
				return true
			}
		}
		return false
	}
	for rel := range ix.watched {
		if under(rel) {
			// Already gone from the kernel's side when the directory was
			// deleted or moved; the error then says so and means nothing.
			ix.watcher.Remove(ix.abs(rel))
			delete(ix.watched, rel)
		}
	}
	var out []change
	for rel := range ix.files {
		if under(path.Dir(rel)) {
			delete(ix.files, rel)
			out = append(out, change{rel: rel})
		}
	}
	return out
}
