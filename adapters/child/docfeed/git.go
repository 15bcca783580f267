package docfeed

import (
	"context"
	"log/slog"
	"strings"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// gitOutputCap bounds the stdout kept of one git command. ls-files of a
// 50,000-file tree is about 3 MB; a command past the cap fails rather than
// returning a truncated listing.
const gitOutputCap = 256 << 20

// gitRunner runs git commands for the feed through gitcmd, which gives
// every command `-C dir`, an environment without GIT_* variables, with
// LC_ALL=C and prompts off, an empty stdin and its own process group,
// killed as a whole when the context ends or Options.GitTimeout passes,
// and keeps every program the repository's own config names from running
// (a workspace folder is not necessarily trusted, and an agent may write
// its .git/config): filters, hooks, fsmonitor, signature programs... On
// top of that, every command:
//   - takes no optional locks (`--no-optional-locks`), so a background
//     status never makes the user's own git fail on index.lock, and never
//     writes the index, whose change would trigger another refresh;
//   - takes pathspecs literally and, whatever the user's own config says,
//     runs no fsmonitor and no signature check and writes no colour
//     (feedConfig): the feed's commands must stay cheap and parseable.
//
// The user's own git config applies otherwise (their excludes file decides
// what is listed). Only machine formats (-z listings, porcelain v2,
// explicit --format fields) are parsed; git's human messages never are.
type gitRunner struct {
	cmd        *gitcmd.Runner
	log        *slog.Logger
	signatures SignatureChecker // Options.Signatures
}

// gitArgs precede every command's own arguments.
var gitArgs = []string{"--no-optional-locks", "--literal-pathspecs"}

// feedConfig is the feed's own configuration, over the user's.
var feedConfig = []gitcmd.Setting{
	{Key: "core.fsmonitor", Value: "false"}, {Key: "color.ui", Value: "false"},
	{Key: "log.showSignature", Value: "false"},
}

func newGitRunner(o Options) *gitRunner {
	return &gitRunner{
		cmd: gitcmd.New(gitcmd.Options{Git: o.Git, Env: o.Env, Args: gitArgs, Config: feedConfig,
			Timeout: o.GitTimeout, MaxStdout: gitOutputCap}),
		log:        o.Logger,
		signatures: o.Signatures,
	}
}

// run runs git in dir, a directory of repo's work tree, and returns its
// stdout and exit status. A non-zero status is not an error: callers read
// the statuses git documents. The error reports a command that did not
// run to completion (not found, cancelled, timed out, killed, output over
// the cap, the repository's config unusable); it names the command and
// carries a bounded stderr tail, for logs only.
func (g *gitRunner) run(ctx context.Context, repo repoInfo, dir string, args ...string) ([]byte, int, error) {
	res, err := g.result(ctx, repo, dir, args)
	if err != nil {
		return nil, -1, err
	}
	return res.Stdout, res.Code, nil
}

// runOK is run for commands whose only success is exit status 0; another
// status is a *gitcmd.Error.
func (g *gitRunner) runOK(ctx context.Context, repo repoInfo, dir string, args ...string) ([]byte, error) {
	res, err := g.result(ctx, repo, dir, args)
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, &gitcmd.Error{Dir: dir, Args: args, Code: res.Code, Stderr: res.Stderr}
	}
	return res.Stdout, nil
}

// result runs the command and logs an exit status other than the 0 and 1
// that commands use for answers.
func (g *gitRunner) result(ctx context.Context, repo repoInfo, dir string, args []string) (gitcmd.Result, error) {
	res, err := g.cmd.RunIn(ctx, repo.Repo, dir, args...)
	if err == nil && res.Code != 0 && res.Code != 1 {
		g.log.Debug("git exited", "cmd", args[0], "code", res.Code, "stderr", string(res.Stderr))
	}
	return res, err
}

// splitNUL splits NUL-terminated records, dropping the final terminator.
func splitNUL(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\x00")
	return strings.Split(s, "\x00")
}
