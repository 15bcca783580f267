package gitexec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/hub"
)

// TestATrackingBranchGetsItsUpstreamAndANewOneNone: --track writes the
// upstream into the repository's own config, which a command through
// the shadow could not.
func TestATrackingBranchGetsItsUpstreamAndANewOneNone(t *testing.T) {
	is := is.New(t)
	s := newWorktreeScene(t)
	r := newRunner(t, s.env)
	tracking, fresh := filepath.Join(s.dir, "feature"), filepath.Join(s.dir, "fresh")
	is.NoErr(r.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: s.main, Dest: tracking, Mode: hub.RemoteTracking,
		Branch: "feature", Base: "origin/feature", BaseRemote: true}))
	is.Equal(git(t, s.env, tracking, "rev-parse", "--abbrev-ref", "@{upstream}"), "origin/feature") // tracks its base
	is.NoErr(r.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: s.main, Dest: fresh, Mode: hub.NewBranch,
		Branch: "fresh", Base: "origin/feature", BaseRemote: true}))
	cmd := exec.Command("git", "-C", fresh, "rev-parse", "--abbrev-ref", "@{upstream}")
	cmd.Env = s.env
	is.True(cmd.Run() != nil) // a new branch tracks nothing
	b, err := os.ReadFile(filepath.Join(fresh, ".git"))
	is.NoErr(err)
	is.Equal(string(b), "gitdir: "+filepath.Join(s.main, ".git", "worktrees", "fresh")+"\n") // the tree names the real git directory
}

// TestAFailedCheckoutKeepsTheTreeAndSaysWhere: when git made the tree
// but could not check it out, the tree stays and the error names its git
// directory.
func TestAFailedCheckoutKeepsTheTreeAndSaysWhere(t *testing.T) {
	is := is.New(t)
	s := newWorktreeScene(t)
	real, err := exec.LookPath("git")
	is.NoErr(err)
	failing := fakeexec.Script(t, filepath.Join(tempDir(t), "git"), `case " $* " in *" reset "*) exit 1;; esac
exec '`+real+`' "$@"
`)
	r := gitexec.New(gitexec.Options{Git: failing, Env: s.env})
	dest := filepath.Join(s.dir, "wt")
	err = r.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: s.main, Dest: dest, Mode: hub.NewBranch, Branch: "wt", Base: "main"})
	var made *hub.WorktreeAddError
	is.True(errors.As(err, &made))                                        // made, not completed
	is.Equal(made.Made, filepath.Join(s.main, ".git", "worktrees", "wt")) // naming its git directory
	is.Equal(hub.MessageOf(err), "git could not check the worktree out")  // and the step that failed
	l, err := newRunner(t, s.env).ListWorktrees(t.Context(), s.main)
	is.NoErr(err)
	is.Equal(len(l.Entries), 2)              // the tree is kept
	is.Equal(l.Entries[1].GitDir, made.Made) // as named
}

func TestListingBoundsAndLayouts(t *testing.T) {
	t.Run("more than MaxWorktrees is an error", func(t *testing.T) {
		is := is.New(t)
		s := newWorktreeScene(t)
		for i := range hub.MaxWorktrees {
			git(t, s.env, s.main, "worktree", "add", "--quiet", "--no-checkout", "--detach", filepath.Join(s.dir, fmt.Sprint(i)))
		}
		_, err := newRunner(t, s.env).ListWorktrees(t.Context(), s.main)
		is.True(err != nil) // 65 checkouts are refused
		is.True(strings.Contains(err.Error(), fmt.Sprintf("more than %d", hub.MaxWorktrees)))
		git(t, s.env, s.main, "worktree", "remove", "--force", filepath.Join(s.dir, "0"))
		l, err := newRunner(t, s.env).ListWorktrees(t.Context(), s.main)
		is.NoErr(err)                              // 64 are listed
		is.Equal(len(l.Entries), hub.MaxWorktrees) // every one
		for _, e := range l.Entries[1:] {
			is.True(e.Detached && e.Branch == "")                                     // detached
			is.Equal(filepath.Dir(e.GitDir), filepath.Join(l.CommonDir, "worktrees")) // each with its own git directory
		}
	})
	t.Run("a bare repository's trees", func(t *testing.T) {
		is := is.New(t)
		s := newWorktreeScene(t)
		wt := filepath.Join(s.dir, "wt")
		git(t, s.env, s.remote, "worktree", "add", "--quiet", wt, "feature")
		for _, dir := range []string{wt, s.remote} {
			l, err := newRunner(t, s.env).ListWorktrees(t.Context(), dir)
			is.NoErr(err)                                                                           // listed from the tree and from the repository
			is.True(l.Bare)                                                                         // a bare repository
			is.Equal(l.CommonDir, s.remote)                                                         // whose git directory it is
			is.Equal(l.Entries[0], hub.WorktreeEntry{Path: s.remote, GitDir: s.remote, Main: true}) // listed first, with no checkout
			is.Equal(l.Entries[1].Branch, "feature")                                                // and its tree
			is.Equal(l.Entries[1].GitDir, filepath.Join(s.remote, "worktrees", "wt"))
		}
	})
	t.Run("a repository without commits", func(t *testing.T) {
		is := is.New(t)
		env := testEnv(t)
		dir := tempDir(t)
		git(t, env, dir, "init", "--quiet")
		l, err := newRunner(t, env).ListWorktrees(t.Context(), dir)
		is.NoErr(err)
		is.Equal(l.Entries, []hub.WorktreeEntry{{Path: dir, GitDir: filepath.Join(dir, ".git"), Branch: "main", Main: true}}) // no HEAD yet
	})
	t.Run("a symbolic link to the repository lists the real paths", func(t *testing.T) {
		is := is.New(t)
		s := newWorktreeScene(t)
		link := filepath.Join(tempDir(t), "link")
		is.NoErr(os.Symlink(s.main, link))
		l, err := newRunner(t, s.env).ListWorktrees(t.Context(), link)
		is.NoErr(err)
		is.Equal(l.CommonDir, filepath.Join(s.main, ".git")) // canonical
		is.Equal(l.Entries[0].Path, s.main)
	})
}

func TestStampsRefuseWhatIsNotTheirFile(t *testing.T) {
	const token = "wharf-checkout-1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, p string)
	}{
		{"a link to a file", func(t *testing.T, p string) {
			target := filepath.Join(tempDir(t), "elsewhere")
			write(t, target, token)
			is.New(t).NoErr(os.Symlink(target, p))
		}},
		{"a dangling link", func(t *testing.T, p string) { is.New(t).NoErr(os.Symlink(filepath.Join(tempDir(t), "none"), p)) }},
		{"a FIFO", func(t *testing.T, p string) { is.New(t).NoErr(syscall.Mkfifo(p, 0o600)) }},
		{"a folder", func(t *testing.T, p string) { is.New(t).NoErr(os.Mkdir(p, 0o700)) }},
		{"a file too large", func(t *testing.T, p string) { write(t, p, strings.Repeat("x", 4096)) }},
		{"a file of no token", func(t *testing.T, p string) { write(t, p, "two words") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newWorktreeScene(t)
			_, gitDir := s.addTree(t, "wt")
			c.plant(t, filepath.Join(gitDir, "wharf-checkout"))
			r := newRunner(t, s.env)
			stamp, err := r.ReadStamp(t.Context(), gitDir)
			is.True(err != nil) // unreadable: the identity is uncertain
			is.Equal(stamp, "")
			is.True(r.WriteStamp(t.Context(), gitDir, token) != nil) // and nothing is written through it
			if c.name == "a link to a file" {
				target, _ := os.Readlink(filepath.Join(gitDir, "wharf-checkout"))
				b, err := os.ReadFile(target)
				is.NoErr(err)
				is.Equal(string(b), token) // the link's target is untouched
			}
		})
	}
	t.Run("a stamp is private", func(t *testing.T) {
		is := is.New(t)
		s := newWorktreeScene(t)
		_, gitDir := s.addTree(t, "wt")
		r := newRunner(t, s.env)
		is.NoErr(r.WriteStamp(t.Context(), gitDir, token))
		fi, err := os.Lstat(filepath.Join(gitDir, "wharf-checkout"))
		is.NoErr(err)
		is.Equal(fi.Mode(), os.FileMode(0o600)) // a regular file for the owner alone
		is.Equal(hub.KindOf(r.WriteStamp(t.Context(), gitDir, "two words")), hub.Invalid)
	})
}

// TestARemovalKilledAtItsDeadlineSaysSo: a removal whose context ends is
// killed with everything it started, and says it ran out of time (some
// of the tree's files may be gone).
func TestARemovalKilledAtItsDeadlineSaysSo(t *testing.T) {
	is := is.New(t)
	s := newWorktreeScene(t)
	dir, _ := s.addTree(t, "wt")
	real, err := exec.LookPath("git")
	is.NoErr(err)
	pidFile := filepath.Join(tempDir(t), "pid")
	stalling := fakeexec.Script(t, filepath.Join(tempDir(t), "git"), `case " $* " in
*" worktree remove "*) echo $$ > '`+pidFile+`'; sleep 60 & sleep 60; exit 0;;
esac
exec '`+real+`' "$@"
`)
	r := gitexec.New(gitexec.Options{Git: stalling, Env: s.env})
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.RemoveWorktree(ctx, s.main, dir, true) }()
	select {
	case err = <-done:
	case <-time.After(cloneWait):
		t.Fatal("the removal outlived its context")
	}
	is.True(errors.Is(err, context.DeadlineExceeded)) // it ran out of time
	b, err := os.ReadFile(pidFile)
	is.NoErr(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	is.NoErr(err)
	is.Equal(runningInGroup(t, pid), []string(nil)) // and nothing it started runs
}
