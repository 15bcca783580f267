package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// InspectTree: three git processes, run at once through the shadow and
// read-only (--no-optional-locks: status refreshes no index), then lstat
// calls. rev-parse --git-path says where the tree's operation markers
// and submodule store are (git decides which names are per tree);
// status lists what deleting the tree would lose; ls-files --stage
// lists the index, whose gitlinks and folders, with status's, are where
// a repository may be nested.

// Bounds of an inspection.
const (
	inspectTimeout   = time.Minute
	maxInspectOutput = 64 << 20
	// maxLstatsInFlight bounds the nested-repository checks at once.
	maxLstatsInFlight = 32
)

// markers are the Git operations InspectTree reports, in order.
var markers = []string{"index.lock", "rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD",
	"REVERT_HEAD", "sequencer", "BISECT_START"}

// InspectTree reports what deleting the tree at dir (its top level)
// would meet, per hub.WorktreeGit.
func (r *Runner) InspectTree(ctx context.Context, dir string) (hub.TreeFacts, error) {
	repo, err := r.treeAt(ctx, dir)
	if err != nil {
		return hub.TreeFacts{}, err
	}
	pathArgs := []string{"rev-parse", "--path-format=absolute"}
	for _, m := range append(slices.Clone(markers), "modules") {
		pathArgs = append(pathArgs, "--git-path", m)
	}
	w := gitcmd.With{Timeout: inspectTimeout, MaxStdout: maxInspectOutput}
	cmds := [][]string{
		pathArgs,
		{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=matching", "--no-renames"},
		{"ls-files", "-z", "--stage"},
	}
	outs := make([][]byte, len(cmds))
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Go(func() {
			res, err := r.runInWith(ctx, repo, w, args...)
			if err == nil && res.Code != 0 {
				err = exitError(repo.Top, args, res, nil)
			}
			outs[i], errs[i] = res.Stdout, err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return hub.TreeFacts{}, hub.Wrap(hub.Internal, err, "git "+cmds[i][0]+" failed")
		}
	}
	var facts hub.TreeFacts
	if facts.InProgress, facts.Submodules, err = operations(outs[0], repo); err != nil {
		return hub.TreeFacts{}, hub.Wrap(hub.Internal, err, "the worktree's operations could not be read")
	}
	if facts.Entries, err = parseStatus(outs[1]); err != nil {
		return hub.TreeFacts{}, hub.Wrap(hub.Internal, err, "git status answered what the Hub cannot read")
	}
	gitlinks, paths, err := parseStage(outs[2])
	if err != nil {
		return hub.TreeFacts{}, hub.Wrap(hub.Internal, err, "git ls-files answered what the Hub cannot read")
	}
	for _, e := range facts.Entries {
		paths = append(paths, e.Path)
	}
	if facts.NestedRepository, err = nestedRepository(repo.Top, gitlinks, paths); err != nil {
		return hub.TreeFacts{}, hub.Wrap(hub.Internal, err, "the worktree's folders could not be read")
	}
	return facts, nil
}

// operations reads rev-parse's answer (one path per marker, then the
// submodule store) and returns the first marker present and whether the
// store exists. Every path must lie in the tree's git directory or the
// common one: a name git kept in the common directory would be answered
// in the shadow.
func operations(out []byte, repo gitcmd.Repo) (string, bool, error) {
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(markers)+1 {
		return "", false, fmt.Errorf("rev-parse answered %d paths for %d", len(lines), len(markers)+1)
	}
	exists := func(p string) (bool, error) {
		if !within(p, repo.GitDir) && !within(p, repo.CommonDir) {
			return false, fmt.Errorf("git placed %s outside the repository", p)
		}
		_, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return err == nil, err
	}
	first := ""
	for i, m := range markers {
		found, err := exists(lines[i])
		if err != nil {
			return "", false, err
		}
		if found && first == "" {
			first = m
		}
	}
	modules, err := exists(lines[len(markers)])
	return first, modules, err
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// parseStatus reads `status --porcelain=v1 -z --no-renames`: "XY path"
// records. A path must be valid UTF-8.
func parseStatus(out []byte) ([]hub.StatusEntry, error) {
	var entries []hub.StatusEntry
	for rec := range bytes.SplitSeq(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(rec) == 0 && len(out) == 0 {
			break
		}
		if len(rec) < 4 || rec[2] != ' ' || !statusCode(rec[0]) || !statusCode(rec[1]) {
			return nil, fmt.Errorf("a status record %q", rec)
		}
		p := rec[3:]
		if !utf8.Valid(p) {
			return nil, errors.New("a path is not valid UTF-8")
		}
		entries = append(entries, hub.StatusEntry{Code: string(rec[:2]), Path: string(p)})
	}
	return entries, nil
}

// statusCode reports a character of porcelain v1's XY.
func statusCode(c byte) bool { return strings.IndexByte(" MTADRCU?!", c) >= 0 }

// parseStage reads `ls-files -z --stage` ("mode object stage\tpath"
// records): the gitlinks' paths, and every path.
func parseStage(out []byte) (gitlinks, paths []string, err error) {
	for rec := range bytes.SplitSeq(bytes.TrimSuffix(out, []byte{0}), []byte{0}) {
		if len(rec) == 0 && len(out) == 0 {
			break
		}
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || len(p) == 0 {
			return nil, nil, fmt.Errorf("an index record %q", rec)
		}
		if bytes.HasPrefix(meta, []byte("160000 ")) {
			gitlinks = append(gitlinks, string(p))
		}
		paths = append(paths, string(p))
	}
	return gitlinks, paths, nil
}

// nestedRepository returns the first, in byte order, of the candidate
// folders of the tree at top that is a repository (isRepository): the
// gitlinks, the folders status lists ("dir/") and every folder holding a
// listed path. At most maxLstatsInFlight are checked at once; a folder
// that cannot be read is an error.
func nestedRepository(top string, gitlinks, paths []string) (string, error) {
	set := map[string]bool{}
	for _, g := range gitlinks {
		set[g] = true
	}
	for _, p := range paths {
		if d, ok := strings.CutSuffix(p, "/"); ok {
			set[d] = true
			p = d
		}
		for d := path.Dir(p); d != "." && d != "/" && !set[d]; d = path.Dir(d) {
			set[d] = true
		}
	}
	candidates := make([]string, 0, len(set))
	for d := range set {
		candidates = append(candidates, d)
	}
	slices.Sort(candidates)

	var next, best atomic.Int64
	best.Store(int64(len(candidates)))
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range min(maxLstatsInFlight, len(candidates)) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(candidates)) || i > best.Load() {
					return
				}
				found, err := isRepository(filepath.Join(top, filepath.FromSlash(candidates[i])))
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
					return
				}
				for found {
					b := best.Load()
					if i >= b || best.CompareAndSwap(b, i) {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return "", firstErr
	}
	if b := best.Load(); b < int64(len(candidates)) {
		return candidates[b], nil
	}
	return "", nil
}

func cmpErr(have, err error) error {
	if have != nil {
		return have
	}
	return err
}

// isRepository reports whether the folder d holds a repository, as git
// would find one there: a .git entry, a HEAD that is not a folder beside
// objects/ and refs/ folders (a bare repository), or a commondir or
// gitdir file (a linked tree's git directory). A folder that is gone, or
// a file in its place, holds none.
func isRepository(d string) (bool, error) {
	exists := func(name string) (fs.FileInfo, bool, error) {
		fi, err := os.Lstat(filepath.Join(d, name))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, false, nil
		}
		return fi, err == nil, err
	}
	for _, name := range []string{".git", "commondir", "gitdir"} {
		if _, ok, err := exists(name); ok || err != nil {
			return ok, err
		}
	}
	head, ok, err := exists("HEAD")
	if !ok || err != nil || head.IsDir() {
		return false, err
	}
	for _, name := range []string{"objects", "refs"} {
		fi, ok, err := exists(name)
		if !ok || err != nil || !fi.IsDir() {
			return false, err
		}
	}
	return true, nil
}
