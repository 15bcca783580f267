package gitcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Two worktree commands run outside the shadow, in the repository git
// itself discovers from dir, reading its config: through a shadow, git
// takes the shadow for the common directory, so it lists the main
// checkout at the shadow's path with no HEAD, never sees that the main
// checkout's branch is in use, records the shadow's path in a new tree's
// .git file and cannot write the upstream of a new branch (the config is
// the shadow's). Neither command runs a program a setting names (doc.go;
// TestWorktreeCommandsRunNoProgramARepositoryNames checks it on the git
// at hand): listing reads files only, and making a tree without checking
// it out creates a branch and two refs, whose hooks addConfig turns off,
// and never reads or writes a file of the work tree, so no filter,
// fsmonitor or checkout hook has anything to run for. The checkout then
// runs through RunIn, in the new tree.

// addConfig is set on AddWorktree, after Options.Config and before
// fixedConfig, overriding whatever the repository's config says at any
// time (these keys are fixed, not named by the repository, so the race
// doc.go describes for overrides does not arise): no hook (creating the branch and the tree's HEAD runs
// reference-transaction), and, though making a tree without a checkout
// consults none of them, no fsmonitor, no branch propagated into
// submodules and no automatic maintenance.
var addConfig = []Setting{
	{"core.hooksPath", os.DevNull},
	{"core.fsmonitor", "false"},
	{"submodule.propagateBranches", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
}

// ListWorktrees runs `git -C dir worktree list --porcelain -z`, keeping
// at most maxStdout bytes of its answer (Options.MaxStdout when not
// positive). It reports as RunIn does: a non-zero exit status (dir is in
// no repository, or one git would not use) is the caller's to read.
func (r *Runner) ListWorktrees(ctx context.Context, dir string, maxStdout int) (Result, error) {
	args := []string{"worktree", "list", "--porcelain", "-z"}
	if !filepath.IsAbs(dir) {
		return Result{}, &Error{Dir: dir, Args: args, Code: -1, Err: fmt.Errorf("%w: a relative folder", ErrRefused)}
	}
	lim := limits{timeout: r.opts.Timeout, maxStdout: r.opts.MaxStdout, env: r.env}
	if maxStdout > 0 {
		lim.maxStdout = maxStdout
	}
	return r.runLimited(ctx, dir, args, nil, lim)
}

// NewWorktree says what tree AddWorktree makes.
type NewWorktree struct {
	// Dest is the new tree's absolute folder.
	Dest string
	// Branch, when set, is a new branch made at Start (-b); else Start is
	// the short name of the existing branch to check out.
	Branch string
	// Track makes the new Branch track Start (--track); else it tracks
	// nothing (--no-track).
	Track bool
	// Start is the commit the tree starts from: a full ref for a new
	// branch, a branch's short name otherwise.
	Start string
}

// AddWorktree makes the tree w says, from the repository git discovers
// from main, without checking it out: `git -C main worktree add
// --no-checkout --quiet [--track|--no-track -b Branch] -- Dest Start`,
// with addConfig. Nothing else can be asked: never --force, --detach or
// -B. A name that is empty or begins with "-" is refused, as is a
// relative Dest. It reports as RunIn does.
func (r *Runner) AddWorktree(ctx context.Context, main string, w NewWorktree) (Result, error) {
	args := []string{"worktree", "add", "--no-checkout", "--quiet"}
	if w.Branch != "" {
		track := "--no-track"
		if w.Track {
			track = "--track"
		}
		args = append(args, track, "-b", w.Branch)
	}
	args = append(args, "--", w.Dest, w.Start)
	fail := func(why string) (Result, error) {
		return Result{}, &Error{Dir: main, Args: args, Code: -1, Err: fmt.Errorf("%w: %s", ErrRefused, why)}
	}
	switch {
	case !filepath.IsAbs(main) || !filepath.IsAbs(w.Dest):
		return fail("a worktree needs absolute folders")
	case badName(w.Start) || w.Branch != "" && badName(w.Branch) || w.Branch == "" && w.Track:
		return fail("a worktree's branch and start must be names")
	case strings.ContainsAny(w.Dest, "\x00\n"):
		return fail("a worktree's folder must be one line")
	}
	env, err := withSettings(r.base, r.opts.Config, addConfig, fixedConfig)
	if err != nil {
		return fail(err.Error())
	}
	return r.runLimited(ctx, main, args, nil, limits{r.opts.Timeout, r.opts.MaxStdout, env})
}

// badName reports a name git could take for an option, or that no ref
// can have.
func badName(s string) bool {
	return s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, "\x00\n")
}
