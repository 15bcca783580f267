package gitcmd

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MaxConfigBytes bounds a repository config file gitcmd reads; a larger
// one is refused (ErrBadConfig). Real ones are a few hundred bytes.
const MaxConfigBytes = 1 << 20

// commonEntries are what git reads from the common directory (path.c's
// common_list, and modules and reftable, which it also takes from there),
// and git-lfs's store, which git-lfs finds through it. A shadow links each
// of them whether or not it exists yet (packed-refs appears with the first
// pack-refs), so it never needs refreshing; hooks and config are left
// out. Other paths git takes from the worktree's own git directory, which
// is the real one.
var commonEntries = []string{
	"branches", "common", "info", "logs", "lost-found", "objects", "refs", "remotes",
	"worktrees", "rr-cache", "svn", "gc.pid", "packed-refs", "shallow", "modules", "reftable", "lfs",
}

// Bounds of a Runner's shadows: how long one stays unused before it is
// removed, and how many are kept.
const (
	shadowIdle = time.Minute
	maxShadows = 256
)

// shadows keeps one shadow common directory per repository a Runner runs
// in (its common and git directories), under a private directory made in
// Options.ShadowDir at first use: made once, links that never change, and a
// config replaced (by a rename, so git reads one whole version) whenever
// the repository's settings that keep allows change. What git writes
// through a shadow's links lands in the repository; a config git would
// write into the shadow itself fails, as the shadow holds git's lock on it
// (a config.lock directory, which stops root too), rather than be lost
// with the shadow. A shadow unused for shadowIdle is removed at the next
// command; at most maxShadows are kept, and past that a command in
// another repository gets a shadow of its own, removed when it ends.
// Runner.Close removes them all.
type shadows struct {
	parent string
	limit  int // maxShadows when 0 (tests set less)
	mu     sync.Mutex
	root   string
	byRepo map[Repo]*shadow
	seq    int
}

type shadow struct {
	dir     string
	config  []byte // what its config holds
	users   int    // commands running with it
	lastUse time.Time
}

// acquire returns the shadow for repo, holding the repository's current
// settings, and release, to call when git has ended.
func (c *shadows) acquire(repo Repo) (dir string, release func(), err error) {
	cfg, err := repoSettings(repo)
	if err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.sweep(now)
	s := c.byRepo[repo]
	if s == nil {
		if limit := cmp.Or(c.limit, maxShadows); len(c.byRepo) >= limit {
			return c.oneOff(repo.CommonDir, cfg)
		}
		if s, err = c.make(repo.CommonDir, cfg); err != nil {
			return "", nil, err
		}
		if c.byRepo == nil {
			c.byRepo = map[Repo]*shadow{}
		}
		c.byRepo[repo] = s
	} else if !bytes.Equal(s.config, cfg) {
		if err := replaceConfig(s.dir, cfg); err != nil {
			return "", nil, err
		}
		s.config = cfg
	}
	s.users++
	return s.dir, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		s.users--
		s.lastUse = time.Now()
	}, nil
}

// make makes a shadow of common holding cfg under the root. c.mu is held.
func (c *shadows) make(common string, cfg []byte) (*shadow, error) {
	if c.root == "" {
		root, err := c.makeRoot()
		if err != nil {
			return nil, err
		}
		c.root = root
	}
	c.seq++
	dir := filepath.Join(c.root, strconv.Itoa(c.seq))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := fillShadow(dir, common, cfg); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &shadow{dir: dir, config: cfg}, nil
}

// makeRoot makes the directory of this Runner's shadows in the parent,
// first removing what an earlier Runner there left behind. c.mu is held.
func (c *shadows) makeRoot() (string, error) {
	if c.parent == "" {
		return os.MkdirTemp("", shadowPrefix)
	}
	if err := os.MkdirAll(c.parent, 0o700); err != nil {
		return "", err
	}
	stale, err := filepath.Glob(filepath.Join(c.parent, shadowPrefix+"*"))
	if err != nil {
		return "", err
	}
	for _, dir := range stale {
		if err := os.RemoveAll(dir); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(c.parent, shadowPrefix)
}

// shadowPrefix begins the name of every Runner's shadow directory.
const shadowPrefix = "wharf-git-"

// oneOff makes a shadow for one command, removed on release.
func (c *shadows) oneOff(common string, cfg []byte) (string, func(), error) {
	s, err := c.make(common, cfg)
	if err != nil {
		return "", nil, err
	}
	return s.dir, func() { os.RemoveAll(s.dir) }, nil
}

// sweep removes the shadows unused for shadowIdle. c.mu is held.
func (c *shadows) sweep(now time.Time) {
	for repo, s := range c.byRepo {
		if s.users == 0 && now.Sub(s.lastUse) > shadowIdle {
			os.RemoveAll(s.dir)
			delete(c.byRepo, repo)
		}
	}
}

// close removes every shadow (a command running meanwhile loses its own
// and fails); later commands make new ones.
func (c *shadows) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	root := c.root
	c.root, c.byRepo = "", nil
	if root == "" {
		return nil
	}
	return os.RemoveAll(root)
}

// fillShadow writes the config cfg and the links to the common entries of
// common into the empty directory dir.
func fillShadow(dir, common string, cfg []byte) error {
	if err := os.WriteFile(filepath.Join(dir, "config"), cfg, 0o600); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, "config.lock"), 0o700); err != nil {
		return err
	}
	for _, n := range commonEntries {
		if err := os.Symlink(filepath.Join(common, n), filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// replaceConfig replaces the shadow's config by a rename, so that a git
// starting meanwhile reads the old version or the new one, whole.
func replaceConfig(dir string, cfg []byte) error {
	tmp := filepath.Join(dir, "config.new")
	if err := os.WriteFile(tmp, cfg, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "config"))
}

// repoSettings reads repo's config (and its config.worktree when the
// config turns extensions.worktreeConfig on) and returns the config file
// the shadow holds: the settings keep allows, in order, and
// extensions.worktreeConfig off, its settings being merged in.
func repoSettings(repo Repo) ([]byte, error) {
	all, err := readSettings(filepath.Join(repo.CommonDir, "config"))
	if err != nil {
		return nil, err
	}
	worktreeConfig := false
	for _, s := range all {
		if s.key == "extensions.worktreeconfig" {
			if worktreeConfig, err = parseBool(s); err != nil {
				return nil, err
			}
		}
	}
	if worktreeConfig {
		more, err := readSettings(filepath.Join(repo.GitDir, "config.worktree"))
		if err != nil {
			return nil, err
		}
		all = append(all, more...)
	}
	out := make([]configEntry, 0, len(all)+1)
	for _, s := range all {
		if keep(s) && s.key != "extensions.worktreeconfig" {
			out = append(out, withoutCredentials(s))
		}
	}
	return writeConfig(out), nil
}

// withoutCredentials drops the user information of a remote's URL
// (https://user:token@host/…): no command gitcmd runs needs it, and a
// shadow, a file in a temporary directory that a crash leaves behind,
// must hold no secret.
func withoutCredentials(s configEntry) configEntry {
	section, _, name, hasSub := s.parts()
	if section != "remote" || !hasSub || (name != "url" && name != "pushurl") {
		return s
	}
	u, err := url.Parse(s.value)
	if err != nil || u.Scheme == "" || u.User == nil {
		return s
	}
	u.User = nil
	s.value = u.String()
	return s
}

// readSettings parses the config file at path; a missing file has no
// settings, as for git. The file is opened without blocking (a FIFO
// would otherwise hang the read) and must be a regular file of at most
// MaxConfigBytes.
func readSettings(path string) ([]configEntry, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrBadConfig, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxConfigBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrBadConfig, path, MaxConfigBytes)
	}
	s, err := parseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// parseBool reads a boolean as git does (git_config_bool), for the one
// key gitcmd interprets; where git would die, it fails.
func parseBool(s configEntry) (bool, error) {
	if s.bare {
		return true, nil
	}
	switch strings.ToLower(s.value) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off", "":
		return false, nil
	}
	n := strings.TrimRight(strings.ToLower(s.value), "kmg")
	if len(s.value)-len(n) <= 1 {
		if i, err := strconv.ParseInt(n, 0, 64); err == nil {
			return i != 0, nil
		}
	}
	return false, fmt.Errorf("%w: bad boolean value for %s", ErrBadConfig, s.key)
}
