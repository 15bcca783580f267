package gitexec

import (
	"context"
	"errors"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// run runs git with args in dir (as -C dir) through the Runner's gitcmd
// runner, which bounds it with the Runner's timeout, gives it an empty
// stdin, its own process group (killed as a whole when ctx ends or the
// timeout passes) and the sanitized environment.
//
// A non-zero exit status is not an error here: callers decide from the
// statuses git documents. run fails, with a *gitcmd.Error, when git did
// not run to completion: it could not start, it timed out or ctx ended, a
// signal ended it, or its stdout overflowed gitcmd's DefaultMaxStdout.
func (r *Runner) run(ctx context.Context, dir string, args ...string) (gitcmd.Result, error) {
	r.runs.Add(1)
	start := time.Now()
	res, err := r.cmd.Run(ctx, dir, args...)
	if errors.Is(err, gitcmd.ErrTimeout) {
		r.log.Warn("git timed out; its process group was killed",
			"dir", dir, "args", args, "timeout", r.timeout)
	}
	if err != nil {
		return gitcmd.Result{}, err
	}
	r.log.Debug("git", "dir", dir, "args", args, "exit", res.Code, "duration", time.Since(start))
	return res, nil
}

// exitError is the private cause of a command whose exit status the caller
// takes for a failure.
func exitError(dir string, args []string, res gitcmd.Result, why error) error {
	return &gitcmd.Error{Dir: dir, Args: args, Code: res.Code, Stderr: res.Stderr, Err: why}
}
