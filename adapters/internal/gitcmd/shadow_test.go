package gitcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/matryer/is"
)

// TestShadowsAreKeptBoundedAndRemoved checks the shadows' life: one per
// repository, reused, removed once idle, bounded in number, and all gone
// at close.
func TestShadowsAreKeptBoundedAndRemoved(t *testing.T) {
	is := is.New(t)
	base := t.TempDir()
	repoAt := func(i int) Repo {
		common := filepath.Join(base, "r"+strconv.Itoa(i), ".git")
		if err := os.MkdirAll(common, 0o755); err != nil {
			t.Fatal(err)
		}
		return Repo{Top: filepath.Dir(common), GitDir: common, CommonDir: common}
	}
	c := &shadows{parent: t.TempDir(), limit: 4}
	a := repoAt(0)
	dir, release, err := c.acquire(a)
	is.NoErr(err) // a shadow
	again, release2, err := c.acquire(a)
	is.NoErr(err)        // and for the same repository
	is.Equal(again, dir) // the same one
	target, err := os.Readlink(filepath.Join(dir, "refs"))
	is.NoErr(err)                                        // linking the common entries
	is.Equal(target, filepath.Join(a.CommonDir, "refs")) // to the repository's
	_, err = os.Lstat(filepath.Join(dir, "hooks"))
	is.True(os.IsNotExist(err)) // but the hooks
	release()
	release2()

	c.sweep(time.Now())
	_, err = os.Stat(dir)
	is.NoErr(err) // kept while recently used
	c.sweep(time.Now().Add(2 * shadowIdle))
	_, err = os.Stat(dir)
	is.True(os.IsNotExist(err)) // removed once idle
	is.Equal(len(c.byRepo), 0)  // and forgotten

	var releases []func()
	for i := range c.limit {
		_, rel, err := c.acquire(repoAt(i + 1))
		is.NoErr(err) // a shadow per repository
		releases = append(releases, rel)
	}
	extra, rel, err := c.acquire(repoAt(c.limit + 1))
	is.NoErr(err)                    // past the bound, with every one in use
	is.Equal(len(c.byRepo), c.limit) // no more are kept
	rel()
	_, err = os.Stat(extra)
	is.True(os.IsNotExist(err)) // and the extra one goes with its command
	for _, rel := range releases {
		rel()
	}
	root := c.root
	is.NoErr(c.close())
	_, err = os.Stat(root)
	is.True(os.IsNotExist(err)) // close removes them all
}

func TestConfigRefusesNULAndHugeFiles(t *testing.T) {
	is := is.New(t)
	_, err := parseConfig([]byte("[s]\n\tk = a\x00b\n"))
	is.True(err != nil) // a NUL, which git would read as the end of a string
	p := filepath.Join(t.TempDir(), "config")
	is.NoErr(os.WriteFile(p, bytes.Repeat([]byte("# padding\n"), MaxConfigBytes/10+1), 0o600))
	_, err = readSettings(p)
	is.True(err != nil) // a file over MaxConfigBytes
	fifo := filepath.Join(t.TempDir(), "fifo")
	if mkfifo(fifo) == nil {
		_, err = readSettings(fifo)
		is.True(err != nil) // a FIFO, refused without blocking
	}
	s, err := readSettings(filepath.Join(t.TempDir(), "missing"))
	is.NoErr(err)       // a missing config
	is.Equal(len(s), 0) // has no settings, as for git
}

// TestOnlyKeptSettingsReachTheShadow checks the filter on settings of
// every kind: what names a program or pulls a file in is dropped, what
// decides how git reads the repository stays, in order, and
// config.worktree joins in when the repository turns it on.
func TestOnlyKeptSettingsReachTheShadow(t *testing.T) {
	is := is.New(t)
	common := t.TempDir()
	gitDir := filepath.Join(common, "worktrees", "w")
	is.NoErr(os.MkdirAll(gitDir, 0o755))
	is.NoErr(os.WriteFile(filepath.Join(common, "config"), []byte(`[core]
	repositoryformatversion = 1
	fsmonitor = /x
	hooksPath = /x
	pager = /x
	sshCommand = /x
	autocrlf = input
[extensions]
	worktreeConfig = 1k
	objectFormat = sha1
[filter "lfs"]
	clean = /x
[include]
	path = /x
[remote "origin"]
	url = git@example.com:x.git
	uploadpack = /x
	fetch = +refs/heads/*:refs/remotes/origin/*
[url "ext::/x"]
	insteadOf = https://
[diff "img"]
	textconv = /x
	binary
[branch "main"]
	remote = origin
	merge = refs/heads/main
[credential]
	helper = /x
[gpg "ssh"]
	program = /x
`), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(gitDir, "config.worktree"), []byte("[core]\n\tsparseCheckout = true\n\teditor = /x\n"), 0o600))
	cfg, err := repoSettings(Repo{Top: "/w", GitDir: gitDir, CommonDir: common})
	is.NoErr(err) // read
	got, err := parseConfig(cfg)
	is.NoErr(err) // and written as a config
	var keys []string
	for _, s := range got {
		keys = append(keys, s.key+"="+s.value)
	}
	is.Equal(keys, []string{
		"core.repositoryformatversion=1", "core.autocrlf=input", "extensions.objectformat=sha1",
		"remote.origin.url=git@example.com:x.git", "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
		"diff.img.binary=", "branch.main.remote=origin", "branch.main.merge=refs/heads/main",
		"core.sparsecheckout=true",
	}) // the kept settings, worktree ones last, worktreeConfig itself gone

	is.NoErr(os.WriteFile(filepath.Join(common, "config"), []byte("[extensions]\n\tworktreeConfig = maybe\n"), 0o600))
	_, err = repoSettings(Repo{Top: "/w", GitDir: gitDir, CommonDir: common})
	is.True(err != nil) // a boolean git would die on is refused too
}
