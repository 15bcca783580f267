package gitexec

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// A fetch runs `git fetch --all --no-prune --no-auto-gc
// --no-recurse-submodules` through the shadow (the remotes' URLs are
// among the settings it keeps; protocol.ext.allow=never stops an ext::
// one), lent its credentials exactly as a clone is (clone.go): a private
// projection folder under the runtime directory, removed when git is
// gone, no system or global config, HOME an empty folder (no .netrc), no
// ambient SSH agent or identity. No prompt can wait: git's are off, ssh
// runs in batch mode, and git's askpass program is Wharf's, which
// answers nothing. --all fetches every remote once; --no-prune and
// --no-auto-gc keep git from rewriting packed-refs or shallow through
// the shadow (worktree.go), and fetch.recurseSubmodules is off anyway.
//
// Whether authentication failed is told without git's messages, from
// what git and ssh asked for:
//
//   - over HTTP(S), a remote that wants credentials answers 401, and
//     only then does git ask its credential helper (the projection's,
//     which asks the broker: credenv.Watched.Token) and, when no helper gave
//     any, its askpass program (Wharf's, which records that it ran);
//   - over SSH, ssh asks the agent for the lent key only once it has
//     connected, agreed on keys and checked the host's: the projection's
//     agent socket is a relay (credenv.Watched) that records a connection.
//
// A fetch that failed after either is an authentication failure (the
// token or key was refused, or none was lent for HTTPS); any other
// failure — refused or unreachable, a timeout, TLS, an unknown host key,
// a missing repository — is reported as the network's. What this cannot
// tell: ssh to a host no key is lent for (ssh exits 255 both when it
// cannot connect and when it has no key to offer, and says which only in
// its messages), and a remote that accepted the credentials and then
// failed (taken for authentication).

// fetchTimeout bounds a fetch.
const fetchTimeout = 10 * time.Minute

// Fetch fetches every remote of the repository at dir, per
// hub.WorktreeGit.
func (r *Runner) Fetch(ctx context.Context, dir string, creds hub.SessionCredentials) error {
	repo, err := r.repoAt(ctx, dir)
	if err != nil {
		return err
	}
	d, err := r.cloneDir()
	if err != nil {
		r.log.Error("no folder for a fetch's credentials", "err", err)
		return hub.Wrap(hub.Internal, err, "the fetch could not be started")
	}
	seen := credenv.Watch(creds.Broker)
	if creds.Broker != nil {
		creds.Broker = seen
	}
	proj, err := credenv.Build(ctx, credenv.Options{Dir: d, Credentials: creds, Command: r.command,
		Base: r.env, NoUserConfig: true, KnownHosts: r.known, Log: r.log})
	if err != nil {
		r.log.Error("a fetch's credentials could not be prepared", "err", err)
		return hub.Wrap(hub.Internal, err, "the fetch's credentials could not be prepared")
	}
	defer proj.Close()
	return r.fetch(ctx, repo, gitcmd.Lent{Home: filepath.Join(d, "git-home"), Env: proj.Vars(), Config: proj.Config()}, seen.Used)
}

// FetchLent fetches as Fetch does, lent credentials projected elsewhere:
// on the Hub, for a fetch on another machine (adapters/internal/hostop),
// the projection's files copied into a private folder of this one (the
// folder of lent.Home, where the fetch writes its askpass program) and
// its sockets forwarded back. Whether the Hub's agent or credential
// helper was asked is known there: a *hub.FetchError that is not an
// authentication failure here may be one there.
func (r *Runner) FetchLent(ctx context.Context, dir string, lent gitcmd.Lent) error {
	repo, err := r.repoAt(ctx, dir)
	if err != nil {
		return err
	}
	return r.fetch(ctx, repo, lent, func() bool { return false })
}

// fetch runs git fetch in repo lent lent, whose Home's folder is private
// and the fetch's to write in; used says whether the lent credentials
// were asked for.
func (r *Runner) fetch(ctx context.Context, repo gitcmd.Repo, lent gitcmd.Lent, used func() bool) error {
	d := filepath.Dir(lent.Home)
	askpass, asked := filepath.Join(d, "askpass"), filepath.Join(d, "asked")
	script := "#!/bin/sh\n# Made by Wharf for one fetch: git asked for credentials none gave.\n: > " + shellQuote(asked) + "\nexit 1\n"
	if err := os.WriteFile(askpass, []byte(script), 0o700); err != nil {
		return hub.Wrap(hub.Internal, err, "the fetch's credentials could not be prepared")
	}
	env := []string{"GIT_ASKPASS=" + askpass}
	for _, kv := range lent.Env {
		if v, ok := strings.CutPrefix(kv, "GIT_SSH_COMMAND="); ok {
			kv = "GIT_SSH_COMMAND=" + v + " -o BatchMode=yes"
		}
		env = append(env, kv)
	}
	config := slices.Clip(lent.Config)
	if r.caFile != "" {
		config = append(config, gitcmd.Setting{Key: "http.sslCAInfo", Value: r.caFile})
	}
	args := []string{"fetch", "--all", "--no-prune", "--no-auto-gc", "--no-recurse-submodules"}
	w := gitcmd.With{Timeout: fetchTimeout, Lent: &gitcmd.Lent{Home: lent.Home, Env: env, Config: config}}
	res, err := r.runInWith(ctx, repo, w, args...)
	switch {
	case err != nil && errors.Is(err, gitcmd.ErrRefused):
		return hub.Wrap(hub.Internal, err, "git refused the fetch")
	case err != nil:
		return &hub.FetchError{Err: hub.Wrap(hub.Unavailable, err, "the fetch did not complete")}
	case res.Code != 0:
		_, statErr := os.Lstat(asked)
		auth := used() || !errors.Is(statErr, fs.ErrNotExist)
		msg := "the remote could not be reached"
		if auth {
			msg = "the remote refused the credentials"
		}
		return &hub.FetchError{Authentication: auth, Err: hub.Wrap(hub.Unavailable, exitError(repo.Top, args, res, nil), msg)}
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
