package daemon_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// wtAnswer is what these tests read of a worktree answer.
type wtAnswer struct {
	OK       bool
	Checkout struct {
		CheckoutID, WorkspaceID, Path, Availability, Ownership string
	}
	RequiresStop bool
	LocalData    *struct {
		Fingerprint string
		Untracked   *struct{ Count int }
		Ignored     *struct {
			Count  int
			Sample []string
		}
	}
	Error struct{ Code, Message, Retry string }
}

// TestTheWorktreeRulesHoldAgainstRealGit drives the worktree family of
// the real `wharf serve` against real git: each row makes a task's
// worktree, puts it in one state git knows, and checks the one answer
// the contract gives for it; no row's files are removed but by a delete
// with a fresh fingerprint.
func TestTheWorktreeRulesHoldAgainstRealGit(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "wwt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	repo := filepath.Join(tmp, "app")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=A", "-c", "user.email=a@example.com",
			"-c", "protocol.file.allow=always"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git(repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(repo, "add", ".")
	git(repo, "commit", "-q", "-m", "first")

	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: filepath.Join(tmp, "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	pw, err := d.FirstUserPassword()
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	if err != nil {
		t.Fatal(err)
	}
	var reg struct{ ID string }
	if status, raw, err := c.Do(ctx, "POST", "api/hub/workspaces", map[string]any{"path": repo}, &reg); err != nil || status >= 300 {
		t.Fatalf("register: %d %s %v", status, raw, err)
	}
	op := func(t *testing.T, name string, body map[string]any) wtAnswer {
		t.Helper()
		body["sourceWorkspaceId"] = reg.ID
		var out wtAnswer
		status, raw, err := c.Do(ctx, "POST", "api/hub/worktrees/"+name, body, &out)
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s: %d %s %v", name, status, raw, err)
		}
		return out
	}
	create := func(t *testing.T, branch string) wtAnswer {
		t.Helper()
		res := op(t, "create", map[string]any{"mode": "new-branch", "branch": branch, "base": map[string]string{"kind": "local", "ref": "main"}})
		if !res.OK {
			t.Fatalf("create %s: %+v", branch, res.Error)
		}
		return res
	}
	preflight := func(t *testing.T, ref string) wtAnswer {
		t.Helper()
		return op(t, "preflight-delete", map[string]any{"reference": ref})
	}
	gitDir := func(t *testing.T, tree string) string {
		t.Helper()
		return strings.TrimSpace(git(tree, "rev-parse", "--absolute-git-dir"))
	}

	for _, tc := range []struct {
		name   string
		branch string
		set    func(t *testing.T, tree string)
		code   string
	}{
		{"a held index.lock", "lock-file", func(t *testing.T, tree string) {
			is.New(t).NoErr(os.WriteFile(filepath.Join(gitDir(t, tree), "index.lock"), nil, 0o644))
		}, "external-activity"},
		{"git worktree lock", "locked", func(t *testing.T, tree string) { git(repo, "worktree", "lock", tree) }, "git-lock"},
		{"a merge in progress", "merging", func(t *testing.T, tree string) {
			git(repo, "branch", "other", "main")
			git(tree, "checkout", "-q", "-b", "side")
			is.New(t).NoErr(os.WriteFile(filepath.Join(tree, "a.txt"), []byte("side\n"), 0o644))
			git(tree, "commit", "-q", "-am", "side")
			other := filepath.Join(tmp, "other")
			git(repo, "worktree", "add", "-q", other, "other")
			is.New(t).NoErr(os.WriteFile(filepath.Join(other, "a.txt"), []byte("other\n"), 0o644))
			git(other, "commit", "-q", "-am", "other")
			cmd := exec.Command("git", "-C", tree, "-c", "user.name=A", "-c", "user.email=a@example.com", "merge", "other")
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			_ = cmd.Run() // a conflict: the merge stays in progress
		}, "external-activity"},
		{"a nested repository", "nested", func(t *testing.T, tree string) {
			inner := filepath.Join(tree, "vendor", "lib")
			is.New(t).NoErr(os.MkdirAll(inner, 0o755))
			git(inner, "init", "-q")
		}, "nested-dependency"},
		{"an initialized submodule", "submodule", func(t *testing.T, tree string) {
			lib := filepath.Join(tmp, "lib")
			is.New(t).NoErr(os.MkdirAll(lib, 0o755))
			git(lib, "init", "-q", "-b", "main")
			git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
			git(tree, "submodule", "add", "-q", lib, "lib")
		}, "nested-dependency"},
		{"a nested worktree", "outer", func(t *testing.T, tree string) {
			git(repo, "worktree", "add", "-q", "-b", "inner", filepath.Join(tree, "inner"), "main")
		}, "nested-dependency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := create(t, tc.branch)
			tree := res.Checkout.Path
			tc.set(t, tree)
			p := preflight(t, res.Checkout.WorkspaceID)
			is.True(!p.OK)                  // blocked
			is.Equal(p.Error.Code, tc.code) // by this
			del := op(t, "delete", map[string]any{"reference": res.Checkout.WorkspaceID, "confirm": true})
			is.True(!del.OK) // a delete is refused the same
			_, err := os.Stat(filepath.Join(tree, "a.txt"))
			is.NoErr(err) // and removes nothing
		})
	}

	t.Run("untracked and ignored files, changed between preflight and delete", func(t *testing.T) {
		is := is.New(t)
		res := create(t, "data")
		tree := res.Checkout.Path
		is.NoErr(os.WriteFile(filepath.Join(tree, "notes.txt"), []byte("n"), 0o644))
		is.NoErr(os.MkdirAll(filepath.Join(tree, "build", "deep"), 0o755))
		is.NoErr(os.WriteFile(filepath.Join(tree, "build", "deep", "out.o"), []byte("o"), 0o644))
		p := preflight(t, "data")
		is.True(p.OK)                                            // nothing blocks
		is.Equal(p.LocalData.Untracked.Count, 1)                 // one untracked file
		is.Equal(p.LocalData.Ignored.Sample, []string{"build/"}) // and an ignored folder, whole
		is.NoErr(os.WriteFile(filepath.Join(tree, "late.txt"), []byte("l"), 0o644))
		del := op(t, "delete", map[string]any{"reference": "data", "confirm": true, "localDataFingerprint": p.LocalData.Fingerprint})
		is.Equal(del.Error.Code, "local-data") // the files changed since
		is.Equal(del.Error.Retry, "refresh")
		_, err := os.Stat(filepath.Join(tree, "late.txt"))
		is.NoErr(err) // nothing was removed
		p = preflight(t, "data")
		del = op(t, "delete", map[string]any{"reference": "data", "confirm": true, "localDataFingerprint": p.LocalData.Fingerprint})
		is.True(del.OK) // deleted with a fresh fingerprint
		_, err = os.Stat(tree)
		is.True(os.IsNotExist(err))                                              // its files are gone
		is.True(strings.Contains(git(repo, "branch", "--list", "data"), "data")) // the branch stays
	})

	t.Run("a branch checked out elsewhere", func(t *testing.T) {
		is := is.New(t)
		res := op(t, "create", map[string]any{"mode": "existing-local", "branch": "main"})
		is.Equal(res.Error.Code, "branch-in-use") // refused before git runs
		is.Equal(res.Error.Retry, "open-existing")
	})

	t.Run("a tree removed behind the Hub's back, and another at its place", func(t *testing.T) {
		is := is.New(t)
		res := create(t, "gone")
		tree, ws := res.Checkout.Path, res.Checkout.WorkspaceID
		is.NoErr(os.RemoveAll(tree))
		var inv struct {
			Inventory struct {
				Checkouts []struct{ Path, Availability, WorkspaceID string }
			}
		}
		read := func() string {
			status, raw, err := c.Do(ctx, "GET", "api/hub/worktrees?source="+reg.ID, nil, &inv)
			is.NoErr(err)
			is.Equal(status, http.StatusOK)
			for _, ch := range inv.Inventory.Checkouts {
				if ch.Path == tree {
					return ch.Availability
				}
			}
			t.Fatalf("no checkout at %s: %s", tree, raw)
			return ""
		}
		is.Equal(read(), "missing") // git lists it as prunable: missing
		o := op(t, "open", map[string]any{"reference": ws, "start": true})
		is.Equal(o.Error.Code, "not-found") // and it cannot be started

		git(repo, "worktree", "prune")
		git(repo, "worktree", "add", "-q", "-b", "impostor", tree, "main")
		is.Equal(read(), "replaced") // another checkout where the Hub's was
		var st struct {
			Workspaces []struct{ ID, Availability string }
		}
		_, _, err := c.Do(ctx, "GET", "api/hub/state", nil, &st)
		is.NoErr(err)
		for _, w := range st.Workspaces {
			if w.ID == ws {
				is.Equal(w.Availability, "replaced") // the state says so too
			}
		}
		o = op(t, "open", map[string]any{"reference": ws, "start": true})
		is.Equal(o.Error.Code, "identity-uncertain") // never started as the Hub's
		p := preflight(t, ws)
		is.True(!p.OK) // nor deleted
		_, err = os.Stat(filepath.Join(tree, "a.txt"))
		is.NoErr(err)
	})
}
