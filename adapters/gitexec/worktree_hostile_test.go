package gitexec_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd/gitcmdtest"
	"github.com/wharfhub/wharf/hub"
)

// TestWorktreesRunNoProgramAFolderConfigNames runs every worktree
// method in a repository whose config names a program in every place
// git runs one from: none runs, where git on its own (each control run)
// runs the repository's programs for the same work.
func TestWorktreesRunNoProgramAFolderConfigNames(t *testing.T) {
	s := gitcmdtest.New(t)
	r := gitexec.New(gitexec.Options{Git: s.Git, Env: s.Env, MaxAge: -1, RuntimeDir: runtimeDir(t), Command: []string{os.Args[0]}})
	t.Cleanup(func() { r.Close() })
	trees := filepath.Join(filepath.Dir(s.Top), "trees")
	if err := os.Mkdir(trees, 0o755); err != nil {
		t.Fatal(err)
	}
	// stale makes every tracked file of the tree at dir look changed, so
	// that status must read (and filter) each.
	stale := func(t *testing.T, dir string) {
		at := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, f := range []string{".gitattributes", "a.md", "b.md", "p.txt", "i.txt", "w.txt"} {
			if err := os.Chtimes(filepath.Join(dir, f), at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	ranNothing := func(t *testing.T, what string) {
		t.Helper()
		if ran := s.Ran(t); len(ran) > 0 {
			t.Fatalf("%s ran the repository's %v", what, ran)
		}
	}
	armed := func(t *testing.T, want string) {
		t.Helper()
		if ran := strings.Join(s.Ran(t), " "); !strings.Contains(ran, want) {
			t.Fatalf("the control run ran %q, not %s", ran, want)
		}
	}

	t.Run("listing and refs", func(t *testing.T) {
		is := is.New(t)
		l, err := r.ListWorktrees(t.Context(), s.Top)
		is.NoErr(err)                      // listed
		is.Equal(l.Entries[0].Path, s.Top) // the repository
		local, remote, err := r.Refs(t.Context(), s.Top)
		is.NoErr(err)                              // and its refs
		is.True(len(local) > 0 && len(remote) > 0) // local and remote
		ranNothing(t, "listing")
	})

	for _, c := range []struct {
		name string
		req  hub.AddWorktreeRequest
	}{
		{"a new branch", hub.AddWorktreeRequest{Mode: hub.NewBranch, Branch: "wt-new", Base: "main"}},
		{"a tracking branch", hub.AddWorktreeRequest{Mode: hub.RemoteTracking, Branch: "wt-track", Base: "origin/main", BaseRemote: true}},
		{"an existing branch", hub.AddWorktreeRequest{Mode: hub.ExistingLocal, Branch: "old"}},
	} {
		t.Run("making and checking out "+c.name, func(t *testing.T) {
			is := is.New(t)
			if c.req.Mode == hub.ExistingLocal {
				s.RawGit(t, s.Top, "-c", "core.hooksPath=/dev/null", "branch", "old", "main")
			}
			req := c.req
			req.Main, req.Dest = s.Top, filepath.Join(trees, req.Branch)
			is.NoErr(r.AddWorktree(t.Context(), req)) // made
			b, err := os.ReadFile(filepath.Join(req.Dest, "a.md"))
			is.NoErr(err)
			is.Equal(string(b), "a\n") // checked out, unfiltered
			ranNothing(t, "AddWorktree")
		})
	}
	t.Run("control: git makes a tree with the repository's hooks and filters", func(t *testing.T) {
		s.RawGit(t, s.Top, "worktree", "add", "-b", "control", filepath.Join(trees, "control"), "main")
		armed(t, "filter.x.smudge")
	})

	t.Run("inspecting", func(t *testing.T) {
		is := is.New(t)
		dir := filepath.Join(trees, "wt-new")
		stale(t, dir)
		facts, err := r.InspectTree(t.Context(), dir)
		is.NoErr(err)                                   // inspected
		is.Equal(facts.InProgress, "")                  // nothing in progress
		is.Equal(facts.Entries, []hub.StatusEntry(nil)) // nothing changed
		ranNothing(t, "InspectTree")
		stale(t, dir)
		s.RawGit(t, dir, "status", "--porcelain")
		armed(t, "filter.x.clean")
	})

	t.Run("removing without force", func(t *testing.T) {
		is := is.New(t)
		dir := filepath.Join(trees, "wt-new")
		stale(t, dir)
		is.NoErr(r.RemoveWorktree(t.Context(), s.Top, dir, false)) // removed
		_, err := os.Stat(dir)
		is.True(errors.Is(err, os.ErrNotExist)) // folder and all
		ranNothing(t, "RemoveWorktree")
		control := filepath.Join(trees, "control2")
		is.NoErr(r.AddWorktree(t.Context(), hub.AddWorktreeRequest{Main: s.Top, Dest: control, Mode: hub.NewBranch, Branch: "control2", Base: "main"}))
		stale(t, control)
		s.RawGit(t, s.Top, "worktree", "remove", control)
		armed(t, "filter.x.clean")
	})

	t.Run("removing with force", func(t *testing.T) {
		is := is.New(t)
		for _, name := range []string{"old", "wt-track"} {
			dir := filepath.Join(trees, name)
			write(t, filepath.Join(dir, "scratch.txt"), "")
			is.NoErr(r.RemoveWorktree(t.Context(), s.Top, dir, true)) // removed
		}
		ranNothing(t, "RemoveWorktree --force")
	})

	t.Run("fetching", func(t *testing.T) {
		is := is.New(t)
		err := r.Fetch(t.Context(), s.Top, hub.SessionCredentials{})
		var fe *hub.FetchError
		is.True(errors.As(err, &fe)) // no remote of the scene is reachable
		ranNothing(t, "Fetch")
	})

	ran := strings.Join(s.Commands(t), "\n")
	for _, c := range []string{"worktree list", "worktree add", "reset --hard", " status ", "ls-files", "--git-path",
		"for-each-ref", "worktree remove", "fetch --all"} {
		if !strings.Contains(ran, c) {
			t.Errorf("the runner never ran %q", c)
		}
	}
}
