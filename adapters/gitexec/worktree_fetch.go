package gitexec

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
// what git asked for: a remote over HTTP(S) that wants credentials
// answers 401, and only then does git ask its credential helper (the
// projection's, which asks the broker: a lent token, or nothing) and,
// when no helper gave any, its askpass program (which records that it
// ran). A fetch that failed after either is an authentication failure: the
// token was refused, or none was lent. Any other failure — refused or
// unreachable, a timeout, TLS, an SSH remote — is reported as the
// network's: ssh exits 255 whether it could not connect or its key was
// refused, and tells which only in its messages.

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
	seen := &seenBroker{SessionBroker: creds.Broker}
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
	askpass, asked := filepath.Join(d, "askpass"), filepath.Join(d, "asked")
	script := "#!/bin/sh\n# Made by Wharf for one fetch: git asked for credentials none gave.\n: > " + shellQuote(asked) + "\nexit 1\n"
	if err := os.WriteFile(askpass, []byte(script), 0o700); err != nil {
		return hub.Wrap(hub.Internal, err, "the fetch's credentials could not be prepared")
	}
	env := []string{"GIT_ASKPASS=" + askpass}
	for _, kv := range proj.Vars() {
		if v, ok := strings.CutPrefix(kv, "GIT_SSH_COMMAND="); ok {
			kv = "GIT_SSH_COMMAND=" + v + " -o BatchMode=yes"
		}
		env = append(env, kv)
	}
	config := proj.Config()
	if r.caFile != "" {
		config = append(config, gitcmd.Setting{Key: "http.sslCAInfo", Value: r.caFile})
	}
	args := []string{"fetch", "--all", "--no-prune", "--no-auto-gc", "--no-recurse-submodules"}
	w := gitcmd.With{Timeout: fetchTimeout, Lent: &gitcmd.Lent{Home: filepath.Join(d, "git-home"), Env: env, Config: config}}
	res, err := r.runInWith(ctx, repo, w, args...)
	switch {
	case err != nil && errors.Is(err, gitcmd.ErrRefused):
		return hub.Wrap(hub.Internal, err, "git refused the fetch")
	case err != nil:
		return &hub.FetchError{Err: hub.Wrap(hub.Unavailable, err, "the fetch did not complete")}
	case res.Code != 0:
		_, statErr := os.Lstat(asked)
		auth := seen.asked.Load() || !errors.Is(statErr, fs.ErrNotExist)
		msg := "the remote could not be reached"
		if auth {
			msg = "the remote refused the credentials"
		}
		return &hub.FetchError{Authentication: auth, Err: hub.Wrap(hub.Unavailable, exitError(repo.Top, args, res, nil), msg)}
	}
	return nil
}

// seenBroker records that git's credential helper asked for a token.
type seenBroker struct {
	hub.SessionBroker
	asked atomic.Bool
}

func (b *seenBroker) Token(ctx context.Context, host string) (string, []byte, error) {
	b.asked.Store(true)
	return b.SessionBroker.Token(ctx, host)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
