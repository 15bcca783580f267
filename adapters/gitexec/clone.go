package gitexec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// A clone runs git through gitcmd.StartClone, in a pseudo-terminal, with
// the credentials it is lent projected as a workspace session's are
// (adapters/internal/credenv): a private folder under the runtime
// directory, made before git starts and removed once git and its group
// are gone, holding the clone's empty HOME, its ssh_config (no key but
// the lent one, no ambient agent) and the credential socket `wharf
// git-credential` asks for a token, one request at a time. The token
// thus never appears in the URL, the clone's .git/config or git's
// environment.

// maxSocketPath is the longest path a Unix socket can bind (sun_path less
// its NUL).
var maxSocketPath = len(syscall.RawSockaddrUnix{}.Path) - 1

// Clone starts git clone of req.URL into req.Target, per hub.GitRunner.
func (r *Runner) Clone(ctx context.Context, req hub.CloneRequest) (hub.CloneRun, error) {
	return r.clone(ctx, req.URL, req.Target, func() (gitcmd.Lent, func(), error) {
		dir, err := r.cloneDir()
		if err != nil {
			r.log.Error("no folder for a clone's credentials", "err", err)
			return gitcmd.Lent{}, nil, hub.Wrap(hub.Internal, err, "the clone could not be started")
		}
		proj, err := credenv.Build(ctx, credenv.Options{Dir: dir, Credentials: req.Credentials, Command: r.command,
			Base: r.env, NoUserConfig: true, KnownHosts: r.known, Log: r.log})
		if err != nil {
			r.log.Error("a clone's credentials could not be prepared", "err", err)
			return gitcmd.Lent{}, nil, hub.Wrap(hub.Internal, err, "the clone's credentials could not be prepared")
		}
		return gitcmd.Lent{Home: filepath.Join(dir, "git-home"), Env: proj.Vars(), Config: proj.Config()}, proj.Close, nil
	})
}

// CloneLent starts git clone of url into target as Clone does, lent
// credentials projected elsewhere: on the Hub, for a clone on another
// machine (adapters/internal/hostop), the projection's files copied to
// this one and its sockets forwarded back; lent's paths are this
// machine's. The caller removes its folder once Wait returned.
func (r *Runner) CloneLent(ctx context.Context, url, target string, lent gitcmd.Lent) (hub.CloneRun, error) {
	return r.clone(ctx, url, target, func() (gitcmd.Lent, func(), error) { return lent, func() {}, nil })
}

// clone is Clone and CloneLent: lend projects the credentials once the
// target is made, and returns what git gets and the projection's end.
func (r *Runner) clone(ctx context.Context, url, target string, lend func() (gitcmd.Lent, func(), error)) (hub.CloneRun, error) {
	if !filepath.IsAbs(target) || filepath.Clean(target) != target || filepath.Dir(target) == target {
		return nil, hub.Errorf(hub.Invalid, "the clone's folder must be a clean absolute path")
	}
	if url == "" || strings.HasPrefix(url, "-") || strings.ContainsAny(url, "\x00\r\n") {
		return nil, hub.Errorf(hub.Invalid, "git refuses this clone's URL")
	}
	parent := filepath.Dir(target)
	if err := checkDir(parent); err != nil {
		return nil, err
	}
	// The folder is made here, in one step that fails on anything at the
	// path (a symbolic link an agent planted included), and git clones
	// into it, empty. Its identity tells, at the end, whether the path
	// still names it (made), and the handle opened on it (root) lets a
	// failed clone be emptied without following the path again.
	made, root, err := makeTarget(target)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			discard(target, made, root)
			root.Close()
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the clone was cancelled")
	}
	lent, end, err := lend()
	if err != nil {
		return nil, err
	}
	config := lent.Config
	if r.caFile != "" {
		config = append(slices.Clip(config), gitcmd.Setting{Key: "http.sslCAInfo", Value: r.caFile})
	}
	r.runs.Add(1)
	term, err := r.cmd.StartClone(ctx, gitcmd.Clone{Dir: parent, URL: url, Target: target,
		Home: lent.Home, Env: lent.Env, Config: config, KillGrace: r.killGrace})
	if err != nil {
		end()
		if errors.Is(err, gitcmd.ErrRefused) {
			return nil, hub.Wrap(hub.Invalid, err, "git refuses this clone")
		}
		r.log.Error("git clone could not be started", "err", err)
		return nil, hub.Wrap(hub.Internal, err, "git clone could not be started")
	}
	ok = true
	run := &cloneRun{Terminal: term, done: make(chan struct{})}
	go func() {
		defer close(run.done)
		defer root.Close()
		err := term.Wait()
		end() // git and its group are gone: nothing uses the credentials
		run.err = cloneEnd(err)
		replaced := err == nil && !stillMade(target, made)
		if replaced {
			run.err = hub.Errorf(hub.Unavailable, "the clone's folder was replaced while git cloned into it")
		}
		if run.err != nil && discard(target, made, root) {
			run.err = hub.Wrap(hub.Unavailable, run.err, hub.MessageOf(run.err)+
				"; "+target+" is not the folder the Hub made and was left as it is")
		}
	}()
	return run, nil
}

// makeTarget makes the clone's folder, and returns its identity and a
// handle on it; anything already at the path is a Conflict.
func makeTarget(target string) (fs.FileInfo, *os.Root, error) {
	if err := os.Mkdir(target, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, nil, hub.Errorf(hub.Conflict, "the clone's folder already exists")
		}
		return nil, nil, folderError(err)
	}
	fi, err := os.Lstat(target)
	if err != nil {
		return nil, nil, folderError(err)
	}
	root, err := os.OpenRoot(target)
	if err != nil {
		_ = os.Remove(target) // fails, and keeps it, unless empty
		return nil, nil, folderError(err)
	}
	if opened, err := root.Stat("."); err != nil || !os.SameFile(opened, fi) {
		// Swapped between the two steps: the handle is not on the
		// folder made.
		root.Close()
		return nil, nil, hub.Errorf(hub.Conflict, "the clone's folder was replaced as it was made")
	}
	return fi, root, nil
}

// stillMade reports whether target still names the folder makeTarget
// made, not a link or another folder put in its place.
func stillMade(target string, made fs.FileInfo) bool {
	fi, err := os.Lstat(target)
	return err == nil && fi.IsDir() && os.SameFile(fi, made)
}

// discard undoes a failed clone: it empties the folder makeTarget made
// through the handle opened on it then — whatever the path names by now,
// only that folder's content goes, and a link in it is removed, never
// followed — and removes the folder when the path still names it. It
// reports whether something is left at the path: a folder or link that
// is not the Hub's, which it leaves as it is.
func discard(target string, made fs.FileInfo, root *os.Root) (left bool) {
	if d, err := root.Open("."); err == nil {
		names, _ := d.Readdirnames(-1)
		d.Close()
		for _, name := range names {
			_ = root.RemoveAll(name)
		}
	}
	if stillMade(target, made) {
		_ = os.Remove(target) // fails, and keeps it, if something was added since
	}
	_, err := os.Lstat(target)
	return !errors.Is(err, fs.ErrNotExist)
}

// cloneDir makes a new private folder for one clone's projection.
func (r *Runner) cloneDir() (string, error) {
	root, err := r.runtimeDir()
	if err != nil {
		return "", err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	dir := filepath.Join(root, hex.EncodeToString(b[:]))
	if n := len(dir) + 1 + len(credenv.LongestSocketName); n > maxSocketPath {
		return "", fmt.Errorf("runtime directory %s is too long for Unix sockets (%d bytes of at most %d)", root, n, maxSocketPath)
	}
	return dir, nil
}

// runtimeDir returns the private folder clones' projections are made
// in: Options.RuntimeDir (made 0700, refused when open to others), or a
// new private temporary folder, made once.
func (r *Runner) runtimeDir() (string, error) {
	r.rtOnce.Do(func() {
		if r.rtDir == "" {
			r.rtDir, r.rtErr = os.MkdirTemp("", "wharf-clones-")
			r.rtTemp = r.rtErr == nil
			return
		}
		if r.rtErr = os.MkdirAll(r.rtDir, 0o700); r.rtErr != nil {
			return
		}
		fi, err := os.Lstat(r.rtDir)
		switch {
		case err != nil:
			r.rtErr = err
		case !fi.IsDir() || fi.Mode().Perm()&0o077 != 0:
			r.rtErr = fmt.Errorf("%s is not a private directory", r.rtDir)
		}
	})
	return r.rtDir, r.rtErr
}

// cloneEnd is Wait's answer for how git ended.
func cloneEnd(err error) error {
	var exit *gitcmd.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.Code >= 0:
		return hub.Wrap(hub.Unavailable, err, fmt.Sprintf("git clone failed with exit status %d", exit.Code))
	case errors.As(err, &exit) && exit.Err != nil:
		return hub.Wrap(hub.Unavailable, err, "git clone was "+exit.Err.Error())
	}
	return hub.Wrap(hub.Internal, err, "git clone ended abnormally")
}

// cloneRun is a running clone: gitcmd's terminal, and the end of its
// projection.
type cloneRun struct {
	*gitcmd.Terminal
	done chan struct{} // closed once git is gone and the projection closed
	err  error
}

// Wait waits for git and its group to be gone and the clone's folder of
// credentials removed.
func (c *cloneRun) Wait() error {
	<-c.done
	return c.err
}

// Kill ends git's group (SIGTERM, then SIGKILL after the grace) and
// returns once it is gone and the clone's credentials are removed.
func (c *cloneRun) Kill() error {
	if err := c.Terminal.Kill(); err != nil {
		return hub.Wrap(hub.Internal, err, "git clone could not be killed")
	}
	<-c.done
	return nil
}
