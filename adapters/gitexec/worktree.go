package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// Worktrees (hub.WorktreeGit): how each command keeps every program a
// repository's config names from running, the rule of gitcmd/doc.go.
//
// Through the shadow, git takes the shadow for the repository's common
// directory, and for worktrees that shows. Measured on git 2.39.5:
// `worktree list` names the main checkout after the shadow, with no HEAD;
// `worktree add` records the shadow's path in the new tree's .git file,
// does not see that the main checkout's branch is checked out (so it
// would check it out twice), and with --track makes the branch, fails to
// write its upstream (the shadow's config is locked) and stops there,
// leaving the branch. So:
//
//   - ListWorktrees runs `git worktree list --porcelain -z` in the
//     repository (gitcmd.ListWorktrees): it reads files, never runs a
//     program. The linked trees' git directories come from their gitdir
//     files under <common>/worktrees, read bounded.
//   - AddWorktree makes the tree in the repository without checking it
//     out (gitcmd.AddWorktree: `worktree add --no-checkout`, hooks off).
//     Nothing of the work tree is read or written, so no filter,
//     fsmonitor or post-checkout hook has anything to run for; git's own
//     checks (branch in use, destination taken) and the paths it records
//     are the real ones, and --track writes the upstream into the real
//     config. The checkout then runs through the shadow, in the new tree
//     (`reset --hard`, what `worktree add` runs itself): filters come
//     from the user's config only. A failed checkout keeps the tree
//     (hub.WorktreeAddError).
//   - Everything else runs through the shadow: `worktree remove`, whose
//     `git status` of the tree (without --force) inherits the shadow,
//     the inspection's status, ls-files and rev-parse, for-each-ref, and
//     the fetch, lent its credentials as a clone is (worktree_fetch.go).
//     What git writes through the shadow lands in the repository: loose
//     refs, objects, a tree's git directory. Two writes would replace a
//     link of the shadow instead (a lock file renamed over packed-refs
//     or shallow): pruning refs and packing them. The fetch never prunes
//     (--no-prune) nor runs maintenance (--no-auto-gc), and nothing here
//     deletes a ref.
//
// TestWorktreesRunNoProgramAFolderConfigNames runs every method in the
// hostile scene of gitcmdtest, with a control run showing that git on
// its own runs the scene's programs for each command.

var _ hub.WorktreeGit = (*Runner)(nil)

// Bounds of the worktree commands.
const (
	// maxListing bounds `worktree list`'s answer: MaxWorktrees entries
	// of long paths and lock reasons.
	maxListing = 1 << 20
	// maxAdminDirs bounds the entries of <common>/worktrees read.
	maxAdminDirs = 4 * hub.MaxWorktrees
	// maxGitdirFile bounds a tree's gitdir file.
	maxGitdirFile = 4096
	// maxRefsOutput bounds for-each-ref's answer: some 100,000 refs.
	maxRefsOutput = 8 << 20
)

// ListWorktrees lists the checkouts of the repository holding dir, per
// hub.WorktreeGit: one git process and bounded file reads.
func (r *Runner) ListWorktrees(ctx context.Context, dir string) (hub.WorktreeListing, error) {
	if err := checkDir(dir); err != nil {
		return hub.WorktreeListing{}, err
	}
	r.runs.Add(1)
	start := time.Now()
	res, err := r.cmd.ListWorktrees(ctx, dir, maxListing)
	if res, err = r.done(dir, []string{"worktree", "list"}, start, res, err); err != nil {
		return hub.WorktreeListing{}, hub.Wrap(hub.Internal, err, "git worktree list failed")
	}
	if res.Code != 0 {
		return hub.WorktreeListing{}, noRepository(dir, []string{"worktree", "list"}, res)
	}
	entries, bare, err := parseWorktreeList(res.Stdout)
	if err != nil {
		return hub.WorktreeListing{}, hub.Wrap(hub.Internal, err, "git worktree list answered what the Hub cannot read")
	}
	common, err := commonDirOf(entries[0].Path)
	if err != nil {
		return hub.WorktreeListing{}, hub.Wrap(hub.Internal, err, "the repository's git directory could not be found")
	}
	entries[0].GitDir = common
	if len(entries) > 1 {
		if err := adminDirs(common, entries[1:]); err != nil {
			return hub.WorktreeListing{}, hub.Wrap(hub.Internal, err, "the worktrees' git directories could not be read")
		}
	}
	return hub.WorktreeListing{CommonDir: common, Bare: bare, Entries: entries}, nil
}

// noRepository is the error of a command git could not run in dir: dir
// is in no repository when nothing there or above it looks like one
// (hub.ErrNoRepository); else git refused what it found.
func noRepository(dir string, args []string, res gitcmd.Result) error {
	marker, err := repositoryMarker(dir)
	if err != nil {
		return folderError(err)
	}
	if marker == "" {
		return hub.ErrNoRepository
	}
	cause := exitError(dir, args, res, fmt.Errorf("exit status %d although %s exists", res.Code, marker))
	return hub.Wrap(hub.Internal, cause, "git could not read the repository")
}

// parseWorktreeList reads `git worktree list --porcelain -z`: records of
// NUL-terminated fields, each ending with an empty field, the main
// checkout's first. Unknown fields are skipped (git may add some); more
// than hub.MaxWorktrees records is an error.
func parseWorktreeList(b []byte) (entries []hub.WorktreeEntry, bare bool, err error) {
	if len(b) == 0 || b[len(b)-1] != 0 {
		return nil, false, errors.New("the listing does not end with a NUL")
	}
	var cur *hub.WorktreeEntry
	for _, f := range strings.Split(string(b[:len(b)-1]), "\x00") {
		if f == "" {
			if cur == nil {
				return nil, false, errors.New("an empty record")
			}
			entries, cur = append(entries, *cur), nil
			continue
		}
		key, value, _ := strings.Cut(f, " ")
		if cur == nil {
			if key != "worktree" || !filepath.IsAbs(value) {
				return nil, false, fmt.Errorf("a record begins with %q", key)
			}
			if len(entries) == hub.MaxWorktrees {
				return nil, false, fmt.Errorf("more than %d worktrees", hub.MaxWorktrees)
			}
			cur = &hub.WorktreeEntry{Path: value, Main: len(entries) == 0}
			continue
		}
		switch key {
		case "HEAD":
			if len(value) != 40 && len(value) != 64 || strings.Trim(value, "0123456789abcdef") != "" {
				return nil, false, fmt.Errorf("a HEAD of %q", value)
			}
			if strings.Trim(value, "0") != "" {
				cur.Head = value
			}
		case "branch":
			name, ok := strings.CutPrefix(value, "refs/heads/")
			if !ok || name == "" {
				return nil, false, fmt.Errorf("a branch of %q", value)
			}
			cur.Branch = name
		case "detached":
			cur.Detached = true
		case "bare":
			bare = bare || cur.Main
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	if cur != nil || len(entries) == 0 {
		return nil, false, errors.New("the listing ends inside a record")
	}
	return entries, bare, nil
}

// commonDirOf returns the canonical common directory of the repository
// whose main checkout git lists at main: git lists the real path of the
// common directory without its final "/.git", so it is main/.git when
// that is a directory, else main itself (a bare repository, or a
// checkout whose git directory lies elsewhere). It must look like a
// repository.
func commonDirOf(main string) (string, error) {
	common := main
	if fi, err := os.Lstat(filepath.Join(main, ".git")); err == nil && fi.IsDir() {
		common = filepath.Join(main, ".git")
	}
	canon, err := filepath.EvalSymlinks(common)
	if err != nil {
		return "", err
	}
	if !looksBare(canon) {
		return "", fmt.Errorf("%s is not a git directory", canon)
	}
	return canon, nil
}

// adminDirs sets the GitDir of each linked tree in entries: the
// directory under common/worktrees whose gitdir file names the tree's
// .git, as git reads it (trailing white space and "/.git" dropped; a
// relative path is relative to the directory). A tree no directory, or
// several, name is an error: its identity is unknown.
func adminDirs(common string, entries []hub.WorktreeEntry) error {
	base := filepath.Join(common, "worktrees")
	d, err := os.Open(base)
	if err != nil {
		return err
	}
	dirs, err := d.ReadDir(maxAdminDirs + 1)
	d.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if len(dirs) > maxAdminDirs {
		return fmt.Errorf("%s holds more than %d entries", base, maxAdminDirs)
	}
	byPath := map[string][]string{}
	for _, e := range dirs {
		admin := filepath.Join(base, e.Name())
		b, err := readSmall(filepath.Join(admin, "gitdir"), maxGitdirFile)
		if err != nil {
			continue // git lists no tree without a readable gitdir file
		}
		p := strings.TrimSuffix(strings.TrimRight(string(b), " \t\n\r"), "/.git")
		if !filepath.IsAbs(p) {
			p = filepath.Join(admin, p)
		}
		if e.Type()&fs.ModeSymlink != 0 {
			if admin, err = filepath.EvalSymlinks(admin); err != nil {
				return err
			}
		}
		byPath[p] = append(byPath[p], admin)
	}
	for i := range entries {
		switch found := byPath[entries[i].Path]; len(found) {
		case 1:
			entries[i].GitDir = found[0]
		case 0:
			return fmt.Errorf("no git directory under %s names the tree %s", base, entries[i].Path)
		default:
			slices.Sort(found)
			return fmt.Errorf("several git directories name the tree %s: %s", entries[i].Path, strings.Join(found, ", "))
		}
	}
	return nil
}

// readSmall reads the regular file at p, of at most max bytes, without
// following a final link or blocking on a FIFO.
func readSmall(p string, max int) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s is over %d bytes", p, max)
	}
	return b, nil
}

// Refs lists the repository's branches and remote-tracking branches, per
// hub.WorktreeGit.
func (r *Runner) Refs(ctx context.Context, dir string) (local, remote []string, err error) {
	repo, err := r.repoAt(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	args := []string{"for-each-ref", "--format=%(refname)%00%(symref)", "refs/heads", "refs/remotes"}
	res, err := r.runInWith(ctx, repo, gitcmd.With{MaxStdout: maxRefsOutput}, args...)
	if err != nil {
		return nil, nil, hub.Wrap(hub.Internal, err, "git for-each-ref failed")
	}
	if res.Code != 0 {
		return nil, nil, hub.Wrap(hub.Internal, exitError(repo.Top, args, res, nil), "git for-each-ref failed")
	}
	for _, line := range bytes.Split(res.Stdout, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		name, symref, ok := strings.Cut(string(line), "\x00")
		if !ok {
			return nil, nil, hub.Wrap(hub.Internal, fmt.Errorf("for-each-ref answered %q", line), "git for-each-ref failed")
		}
		if b, ok := strings.CutPrefix(name, "refs/heads/"); ok {
			local = append(local, b)
		} else if b, ok := strings.CutPrefix(name, "refs/remotes/"); ok && symref == "" {
			remote = append(remote, b)
		}
	}
	slices.Sort(local)
	slices.Sort(remote)
	return local, remote, nil
}

// repoAt asks git which checkout holds dir (an existing absolute
// folder); in no repository it is hub.ErrNoRepository.
func (r *Runner) repoAt(ctx context.Context, dir string) (gitcmd.Repo, error) {
	if err := checkDir(dir); err != nil {
		return gitcmd.Repo{}, err
	}
	r.runs.Add(1)
	repo, res, err := r.cmd.Discover(ctx, dir)
	if err != nil {
		return gitcmd.Repo{}, hub.Wrap(hub.Internal, r.logged(dir, []string{"rev-parse"}, err), "git rev-parse failed")
	}
	if res.Code != 0 {
		return gitcmd.Repo{}, noRepository(dir, []string{"rev-parse"}, res)
	}
	return repo, nil
}

// treeAt is repoAt for a checkout's top level: dir must be it.
func (r *Runner) treeAt(ctx context.Context, dir string) (gitcmd.Repo, error) {
	repo, err := r.repoAt(ctx, dir)
	if err != nil {
		return gitcmd.Repo{}, err
	}
	if canon, err := filepath.EvalSymlinks(dir); err != nil || canon != repo.Top {
		return gitcmd.Repo{}, hub.Errorf(hub.Invalid, "the folder is not the top of a checkout")
	}
	return repo, nil
}
