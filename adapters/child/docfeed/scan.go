package docfeed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// repoInfo locates the Git repository holding the root; a zero Top means
// the root is not inside a work tree.
type repoInfo struct{ gitcmd.Repo }

func (r repoInfo) isGit() bool { return r.Top != "" }

// detectRepo asks git whether root lies in a work tree. Any failure to say
// so (not a repository, inside .git, a bare repository, an unsafe owner,
// a path git prints on several lines, git missing) means "not a
// repository": the tree is then walked without ignore rules, as git itself
// would not apply them there.
func detectRepo(ctx context.Context, g *gitRunner, root string) (repoInfo, error) {
	repo, res, err := g.cmd.Discover(ctx, root)
	switch {
	case err != nil && ctx.Err() != nil:
		return repoInfo{}, err
	case errors.Is(err, gitcmd.ErrUnexpectedOutput):
		g.log.Debug("a repository git cannot name on one line; indexing it as a plain folder", "err", err)
		return repoInfo{}, nil
	case err != nil:
		g.log.Warn("git unavailable; indexing without ignore rules", "err", err)
		return repoInfo{}, nil
	}
	if res.Code != 0 {
		return repoInfo{}, nil
	}
	return repoInfo{repo}, nil
}

// listing is what one scan found: candidate files (not yet classified) and
// the directories to watch, as slash-separated paths relative to the root.
type listing struct {
	files []string
	dirs  []string
}

// scanner lists a root's files and directories, honouring the ignore
// rules of the repository (if any). It never follows symbolic links and
// never descends into .git, into ignored directories or (in a repository)
// into nested repositories and submodules, whose files git does not list.
type scanner struct {
	root string
	repo repoInfo
	git  *gitRunner
	// watch is called with each directory to watch, during the walk and
	// before files are listed, so nothing created meanwhile goes unseen.
	watch func(rel string)
}

// scan lists the whole root when specs is empty, else the given paths
// (files or directories, relative to the root; none may be "").
func (s *scanner) scan(ctx context.Context, specs []string) (listing, error) {
	if !s.repo.isGit() {
		return s.walkAll(specs)
	}
	return s.scanGit(ctx, specs)
}

// walkAll lists a folder that is not a repository: everything but .git.
func (s *scanner) walkAll(specs []string) (listing, error) {
	var l listing
	if len(specs) == 0 {
		specs = []string{""}
	}
	for _, spec := range specs {
		if err := s.walk(spec, nil, &l, true); err != nil {
			return listing{}, err
		}
	}
	return l, nil
}

// scanGit lists a repository's files with `ls-files --cached --others
// --exclude-standard` (tracked files, even ignored ones, plus untracked
// files that are not ignored), after walking the directories to watch
// while skipping those git reports as wholly ignored.
func (s *scanner) scanGit(ctx context.Context, specs []string) (listing, error) {
	var dirSpecs []string
	for _, spec := range specs {
		if fi, err := os.Lstat(s.abs(spec)); err == nil && fi.IsDir() {
			dirSpecs = append(dirSpecs, spec)
		}
	}
	var l listing
	if len(specs) == 0 || len(dirSpecs) > 0 {
		// Entries ending in "/" are directories ignored as a whole.
		ignored, err := s.lsFiles(ctx, dirSpecs, "--others", "--ignored", "--exclude-standard", "--directory")
		if err != nil {
			return listing{}, err
		}
		prune := map[string]bool{}
		for _, p := range ignored {
			if strings.HasSuffix(p, "/") {
				prune[strings.TrimSuffix(p, "/")] = true
			}
		}
		if len(specs) == 0 {
			dirSpecs = []string{""}
		}
		for _, spec := range dirSpecs {
			if prune[spec] {
				continue
			}
			if err := s.walk(spec, prune, &l, false); err != nil {
				return listing{}, err
			}
		}
	}
	files, err := s.lsFiles(ctx, specs, "--cached", "--others", "--exclude-standard")
	if err != nil {
		return listing{}, err
	}
	seen := make(map[string]bool, len(files))
	for _, p := range files {
		// "dir/" is an untracked nested repository; duplicates come from
		// unmerged entries, listed once per stage.
		if strings.HasSuffix(p, "/") || seen[p] || !usablePath(p) {
			continue
		}
		seen[p] = true
		l.files = append(l.files, p)
	}
	return l, nil
}

// lsFiles runs ls-files with flags over specs (all of the root when
// empty), in chunks that keep the command line well under the system's
// limit.
func (s *scanner) lsFiles(ctx context.Context, specs []string, flags ...string) ([]string, error) {
	const chunkBytes = 64 << 10
	run := func(chunk []string) ([]string, error) {
		args := append([]string{"ls-files", "-z"}, flags...)
		if len(chunk) > 0 {
			args = append(append(args, "--"), chunk...)
		}
		out, err := s.git.runOK(ctx, s.repo, s.root, args...)
		if err != nil {
			return nil, err
		}
		return splitNUL(out), nil
	}
	if len(specs) == 0 {
		return run(nil)
	}
	var all []string
	for start := 0; start < len(specs); {
		end, size := start, 0
		for end < len(specs) && (end == start || size+len(specs[end]) < chunkBytes) {
			size += len(specs[end]) + 1
			end++
		}
		got, err := run(specs[start:end])
		if err != nil {
			return nil, err
		}
		all = append(all, got...)
		start = end
	}
	return all, nil
}

// walk visits the directory rel and below: each directory is reported to
// s.watch and recorded; with withFiles, regular files are recorded too.
// It skips symbolic links, .git, directories in prune and, in a repository
// (prune != nil), nested repositories. A directory that vanishes meanwhile
// is skipped; an unreadable root is an error.
func (s *scanner) walk(rel string, prune map[string]bool, l *listing, withFiles bool) error {
	fi, err := os.Lstat(s.abs(rel))
	if err != nil {
		if rel != "" && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("list %s: %w", s.abs(rel), err)
	}
	if !fi.IsDir() {
		if withFiles && fi.Mode().IsRegular() && usablePath(rel) {
			l.files = append(l.files, rel)
		}
		return nil
	}
	stack := []string{rel}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := readDir(s.abs(dir))
		if err != nil {
			if dir == "" {
				return fmt.Errorf("list %s: %w", s.root, err)
			}
			continue // vanished or unreadable: nothing of it can be shown
		}
		if prune != nil && dir != "" && hasGitEntry(entries) {
			continue
		}
		if s.watch != nil {
			s.watch(dir)
		}
		l.dirs = append(l.dirs, dir)
		for _, e := range entries {
			name := e.Name()
			child := path.Join(dir, name)
			switch t := e.Type(); {
			case name == ".git" || t&fs.ModeSymlink != 0:
			case t.IsDir():
				if !prune[child] {
					stack = append(stack, child)
				}
			case withFiles && t.IsRegular() && usablePath(child):
				l.files = append(l.files, child)
			}
		}
	}
	return nil
}

// readDir reads a directory's entries unsorted (sorting 50,000 names for
// nothing costs more than the read).
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func hasGitEntry(entries []fs.DirEntry) bool {
	for _, e := range entries {
		if e.Name() == ".git" {
			return true
		}
	}
	return false
}

func (s *scanner) abs(rel string) string {
	if rel == "" {
		return s.root
	}
	return filepath.Join(s.root, filepath.FromSlash(rel))
}

// usablePath refuses paths a document id cannot carry faithfully: JSON
// strings are UTF-8, so a name in another encoding would come back as a
// different file.
func usablePath(rel string) bool { return utf8.ValidString(rel) }
