package gitexec

import (
	"context"
	"errors"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// runIn runs git with args in the repository repo's top level, and
// runOutside in dir outside any repository (init), through the Runner's
// gitcmd runner: it bounds each with the Runner's timeout, gives it an
// empty stdin, its own process group (killed as a whole when ctx ends or
// the timeout passes) and the sanitized environment, and keeps every
// program the repository's config names from running.
//
// A non-zero exit status is not an error here: callers decide from the
// statuses git documents. Both fail, with a *gitcmd.Error, when git did
// not run to completion: it could not start, it timed out or ctx ended, a
// signal ended it, its stdout overflowed gitcmd's DefaultMaxStdout, or
// (runIn) the repository's config could not be used.
func (r *Runner) runIn(ctx context.Context, repo gitcmd.Repo, args ...string) (gitcmd.Result, error) {
	r.runs.Add(1)
	start := time.Now()
	res, err := r.cmd.RunIn(ctx, repo, "", args...)
	return r.done(repo.Top, args, start, res, err)
}

// runInWith is runIn with the bounds (and credentials) of w.
func (r *Runner) runInWith(ctx context.Context, repo gitcmd.Repo, w gitcmd.With, args ...string) (gitcmd.Result, error) {
	r.runs.Add(1)
	start := time.Now()
	res, err := r.cmd.RunInWith(ctx, repo, "", w, args...)
	return r.done(repo.Top, args, start, res, err)
}

func (r *Runner) runOutside(ctx context.Context, dir string, args ...string) (gitcmd.Result, error) {
	r.runs.Add(1)
	start := time.Now()
	res, err := r.cmd.Run(ctx, dir, args...)
	return r.done(dir, args, start, res, err)
}

// done logs a command's end.
func (r *Runner) done(dir string, args []string, start time.Time, res gitcmd.Result, err error) (gitcmd.Result, error) {
	if err != nil {
		return gitcmd.Result{}, r.logged(dir, args, err)
	}
	r.log.Debug("git", "dir", dir, "args", args, "exit", res.Code, "duration", time.Since(start))
	return res, nil
}

// logged warns of a timeout, whose process group gitcmd killed, and
// returns err.
func (r *Runner) logged(dir string, args []string, err error) error {
	if errors.Is(err, gitcmd.ErrTimeout) {
		r.log.Warn("git timed out; its process group was killed",
			"dir", dir, "args", args, "timeout", r.timeout)
	}
	return err
}

// exitError is the private cause of a command whose exit status the caller
// takes for a failure.
func exitError(dir string, args []string, res gitcmd.Result, why error) error {
	return &gitcmd.Error{Dir: dir, Args: args, Code: res.Code, Stderr: res.Stderr, Err: why}
}
