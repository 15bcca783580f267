package docfeed

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// commitLogLimit is the contract's maximum commit log length.
const commitLogLimit = 100

// repoReading is one repository refresh's result.
type repoReading struct {
	// byTarget holds the encoded RepositorySnapshot array per target.
	byTarget map[CompareTarget]json.RawMessage
	// branch is the checked-out branch ("" when detached or not a
	// repository), whose ref file the metadata poll watches.
	branch string
}

// baseCandidates are the default-branch refs a "base" comparison may use,
// in order of preference after origin/HEAD's target: the remote's view of
// the default branch is what a branch will be merged into.
var baseCandidates = []string{
	"refs/remotes/origin/main", "refs/remotes/origin/master", "refs/heads/main", "refs/heads/master",
}

// readRepository reads the repository holding root (or describes a plain
// folder) for both compare targets. The error is for the logs; its text
// names the git command that failed, never file contents.
func readRepository(ctx context.Context, g *gitRunner, root string, repo repoInfo, now time.Time) (repoReading, error) {
	if !repo.isGit() {
		snap := repositorySnapshot{
			ID: root, RootPath: root, Label: filepath.Base(root), WatchedRootIDs: []string{root},
			Status: repositoryNonGit, ChangedFiles: []changedFile{}, GitIgnoredFiles: []string{},
			ConfigWarnings: []any{}, CommitLog: []commitLogEntry{},
		}
		b := mustJSON([]repositorySnapshot{snap})
		return repoReading{byTarget: map[CompareTarget]json.RawMessage{CompareBase: b, CompareLastCommit: b}}, nil
	}
	top := repo.Top
	out, err := g.runOK(ctx, repo, top, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
	if err != nil {
		return repoReading{}, err
	}
	st, err := parseStatus(out)
	if err != nil {
		return repoReading{}, err
	}
	meta := &repoMetadata{Detached: st.detached}
	if st.branch != "" {
		meta.Branch = ptr(st.branch)
	}
	if st.upstream != "" {
		meta.Upstream = ptr(st.upstream)
		if st.hasAB {
			meta.Ahead, meta.Behind = ptr(st.ahead), ptr(st.behind)
		}
	}

	log := []commitLogEntry{}
	var headCounts map[string]*diffEntry
	if st.oid != "" {
		meta.HeadSha = ptr(st.oid)
		if out, err = g.runOK(ctx, repo, top, "log", "-z", fmt.Sprintf("--max-count=%d", commitLogLimit),
			logFields, "HEAD", "--"); err != nil {
			return repoReading{}, err
		}
		var fulls []string
		log, fulls = parseLog(out, now)
		g.checkSignatures(ctx, repo, top, log, fulls, g.signatures)
		if len(log) > 0 {
			meta.HeadShort = ptr(log[0].Sha)
		}
		if headCounts, err = diffAgainst(ctx, g, repo, "HEAD", false); err != nil {
			return repoReading{}, err
		}
	}
	last := lastCommitFiles(st, headCounts)
	lastBase := &compareBase{Mode: "head", CompareTarget: CompareLastCommit}
	if st.oid != "" {
		lastBase.ComparedAgainstRef = ptr("HEAD")
	}

	base, baseFiles, err := readBase(ctx, g, repo, st, last)
	if err != nil {
		return repoReading{}, err
	}
	lastBase.TargetsCollapsed = base.TargetsCollapsed

	snap := func(b *compareBase, files []changedFile) json.RawMessage {
		return mustJSON([]repositorySnapshot{{
			ID: top, RootPath: top, Label: filepath.Base(top), WatchedRootIDs: []string{root},
			Metadata: meta, Status: repositoryAvailable, Base: b, ChangedFiles: files,
			GitIgnoredFiles: []string{}, ConfigWarnings: []any{}, CommitLog: log,
		}})
	}
	return repoReading{
		byTarget: map[CompareTarget]json.RawMessage{
			CompareLastCommit: snap(lastBase, last),
			CompareBase:       snap(base, baseFiles),
		},
		branch: st.branch,
	}, nil
}

// lastCommitFiles are the status entries, with line counts from the diff
// against HEAD where git could count them.
func lastCommitFiles(st statusReport, counts map[string]*diffEntry) []changedFile {
	files := make([]changedFile, 0, len(st.entries))
	for _, e := range st.entries {
		cf := changedFile{Path: e.path, Status: e.word(), Hunks: []any{}}
		if e.oldPath != "" {
			cf.OldPath = ptr(e.oldPath)
		}
		if c := counts[e.path]; c != nil {
			cf.Additions, cf.Deletions = c.additions, c.deletes
		}
		files = append(files, cf)
	}
	slices.SortFunc(files, func(a, b changedFile) int { return strings.Compare(a.Path, b.Path) })
	return files
}

// readBase finds the default branch and the merge base with it, and the
// changed files against that merge base (tracked changes from the diff,
// untracked ones from status). On the default branch itself, without one,
// or without a common ancestor, the base collapses onto HEAD.
func readBase(ctx context.Context, g *gitRunner, repo repoInfo, st statusReport, last []changedFile) (*compareBase, []changedFile, error) {
	collapsed := &compareBase{Mode: "head", CompareTarget: CompareBase, TargetsCollapsed: true}
	if st.oid != "" {
		collapsed.ComparedAgainstRef = ptr("HEAD")
	}
	if st.oid == "" {
		return collapsed, last, nil
	}
	args := append([]string{"for-each-ref", "--format=%(refname)%00%(symref)", "refs/remotes/origin/HEAD"}, baseCandidates...)
	out, err := g.runOK(ctx, repo, repo.Top, args...)
	if err != nil {
		return nil, nil, err
	}
	refs := map[string]string{} // refname -> symref target
	for line := range strings.SplitSeq(strings.TrimSuffix(string(out), "\n"), "\n") {
		if name, target, ok := strings.Cut(line, "\x00"); ok {
			refs[name] = target
		}
	}
	// origin/HEAD names the remote's default branch; a dangling one makes
	// merge-base fail below, which collapses the base like no branch does.
	ref := refs["refs/remotes/origin/HEAD"]
	for _, c := range baseCandidates {
		if _, ok := refs[c]; ok && ref == "" {
			ref = c
		}
	}
	if ref == "" {
		return collapsed, last, nil
	}
	short := strings.TrimPrefix(strings.TrimPrefix(ref, "refs/remotes/"), "refs/heads/")
	collapsed.Ref = ptr(short)
	out, code, err := g.run(ctx, repo, repo.Top, "merge-base", "HEAD", ref)
	if err != nil {
		return nil, nil, err
	}
	mb := strings.TrimSpace(string(out))
	if code != 0 || !isHex(mb) || mb == st.oid {
		return collapsed, last, nil
	}
	diff, err := diffAgainst(ctx, g, repo, mb, true)
	if err != nil {
		return nil, nil, err
	}
	files := make([]changedFile, 0, len(diff))
	for _, d := range diff {
		cf := changedFile{Path: d.path, Status: d.status, Additions: d.additions, Deletions: d.deletes, Hunks: []any{}}
		if d.oldPath != "" {
			cf.OldPath = ptr(d.oldPath)
		}
		files = append(files, cf)
	}
	for _, e := range st.entries {
		if e.kind == '?' {
			files = append(files, changedFile{Path: e.path, Status: "untracked", Hunks: []any{}})
		}
	}
	slices.SortFunc(files, func(a, b changedFile) int { return strings.Compare(a.Path, b.Path) })
	return &compareBase{
		Mode: "merge-base", Ref: ptr(short), MergeBase: ptr(mb), CompareTarget: CompareBase,
		ComparedAgainstRef: ptr(mb),
	}, files, nil
}

// diffAgainst diffs the work tree against a commit: line counts, and with
// raw the change of each path too. External diff drivers and text
// conversion filters are off, whoever configured them (the user's own
// config may): they would cost a program per file.
func diffAgainst(ctx context.Context, g *gitRunner, repo repoInfo, commit string, raw bool) (map[string]*diffEntry, error) {
	args := []string{"diff", "--numstat", "-z", "-M", "--no-ext-diff", "--no-textconv"}
	if raw {
		args = append(args, "--raw")
	}
	out, err := g.runOK(ctx, repo, repo.Top, append(args, commit, "--")...)
	if err != nil {
		return nil, err
	}
	return parseDiff(out)
}
