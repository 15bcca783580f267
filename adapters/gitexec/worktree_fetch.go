package gitexec

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// what git and ssh asked for:
//
//   - over HTTP(S), a remote that wants credentials answers 401, and
//     only then does git ask its credential helper (the projection's,
//     which asks the broker: seenBroker.Token) and, when no helper gave
//     any, its askpass program (Wharf's, which records that it ran);
//   - over SSH, ssh asks the agent for the lent key only once it has
//     connected, agreed on keys and checked the host's: the projection's
//     agent socket is a relay (agentRelay) that records a connection.
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
		auth := seen.asked.Load() || seen.agentUsed.Load() || !errors.Is(statErr, fs.ErrNotExist)
		msg := "the remote could not be reached"
		if auth {
			msg = "the remote refused the credentials"
		}
		return &hub.FetchError{Authentication: auth, Err: hub.Wrap(hub.Unavailable, exitError(repo.Top, args, res, nil), msg)}
	}
	return nil
}

// seenBroker records that git's credential helper asked for a token, or
// that ssh used the agent.
type seenBroker struct {
	hub.SessionBroker
	asked, agentUsed atomic.Bool
}

func (b *seenBroker) Token(ctx context.Context, host string) (string, []byte, error) {
	b.asked.Store(true)
	return b.SessionBroker.Token(ctx, host)
}

// ServeAgent serves the broker's agent at a socket beside path, and at
// path a relay to it that records each connection.
func (b *seenBroker) ServeAgent(path string) (hub.CredentialAgent, error) {
	inner, err := b.SessionBroker.ServeAgent(filepath.Join(filepath.Dir(path), "up.sock"))
	if err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		if l != nil {
			l.Close()
		}
		inner.Close()
		return nil, err
	}
	a := &agentRelay{CredentialAgent: inner, l: l, path: path, used: &b.agentUsed, conns: map[net.Conn]bool{}}
	a.wg.Add(1)
	go a.serve()
	return a, nil
}

// agentRelay relays the connections to its socket to the broker's agent.
type agentRelay struct {
	hub.CredentialAgent
	l    *net.UnixListener
	path string
	used *atomic.Bool
	wg   sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

// maxRelayed bounds the connections relayed at once.
const maxRelayed = 8

func (a *agentRelay) serve() {
	defer a.wg.Done()
	for {
		c, err := a.l.Accept()
		if err != nil {
			return
		}
		a.used.Store(true)
		up, err := net.Dial("unix", a.CredentialAgent.Path())
		a.mu.Lock()
		if err != nil || a.closed || len(a.conns) >= 2*maxRelayed {
			a.mu.Unlock()
			c.Close()
			if up != nil {
				up.Close()
			}
			continue
		}
		a.conns[c], a.conns[up] = true, true
		a.wg.Add(2)
		a.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			defer a.wg.Done()
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
			a.mu.Lock()
			delete(a.conns, dst)
			delete(a.conns, src)
			a.mu.Unlock()
		}
		go pipe(up, c)
		go pipe(c, up)
	}
}

// Path is the relay's socket.
func (a *agentRelay) Path() string { return a.path }

// Close stops relaying, then closes the broker's agent.
func (a *agentRelay) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	for c := range a.conns {
		c.Close()
	}
	a.mu.Unlock()
	a.l.Close()
	a.wg.Wait()
	return a.CredentialAgent.Close()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
