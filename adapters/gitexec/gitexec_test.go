package gitexec_test

import (
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// testEnv returns a base environment whose HOME holds its own .gitconfig,
// so neither the user's config nor the host's default branch leaks in.
func testEnv(t testing.TB) []string {
	t.Helper()
	home := tempDir(t)
	cfg := "[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.com\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"PATH=" + os.Getenv("PATH"),
	}
}

// tempDir returns a canonical, empty temporary directory.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newRunner returns a Runner over real git with the isolated environment
// env, logging to the test's output.
func newRunner(t *testing.T, env []string) *gitexec.Runner {
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	return gitexec.New(gitexec.Options{Env: env, Logger: log})
}

// git runs real git in dir to set a scene up, failing the test on error.
func git(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo returns a repository with one commit, in a canonical temp dir.
func newRepo(t *testing.T, env []string) string {
	t.Helper()
	dir := tempDir(t)
	git(t, env, dir, "init", "--quiet")
	git(t, env, dir, "commit", "--quiet", "--allow-empty", "-m", "first")
	return dir
}

func TestRunner(t *testing.T) {
	porttest.Git(t, func(t *testing.T) (hub.GitRunner, hub.FS, string) {
		return newRunner(t, testEnv(t)), osfs.FS{}, tempDir(t)
	})
}

func TestBranch(t *testing.T) {
	tests := []struct {
		name  string
		setup []string // a git command run in the repository, if any
		want  string
	}{
		{name: "default", want: "main"},
		{name: "detached HEAD", setup: []string{"checkout", "--quiet", "--detach"}, want: ""},
		{name: "slash in name", setup: []string{"checkout", "--quiet", "-b", "feature/x"}, want: "feature/x"},
		{name: "tag of the same name", setup: []string{"tag", "main"}, want: "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			env := testEnv(t)
			dir := newRepo(t, env)
			if tt.setup != nil {
				git(t, env, dir, tt.setup...)
			}
			repo, err := newRunner(t, env).Inspect(t.Context(), dir)
			is.NoErr(err)
			is.Equal(repo.Branch, tt.want) // the short branch name, "" when detached
		})
	}
}

func TestLinkedWorktree(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	top := newRepo(t, env)
	wt := filepath.Join(tempDir(t), "wt")
	git(t, env, top, "worktree", "add", "--quiet", "-b", "topic", wt)
	sub := filepath.Join(wt, "sub")
	is.NoErr(os.Mkdir(sub, 0o755))

	repo, err := newRunner(t, env).Inspect(t.Context(), sub)
	is.NoErr(err)
	is.Equal(repo.TopLevel, wt)                          // its own work tree
	is.Equal(repo.CommonDir, filepath.Join(top, ".git")) // the main checkout's git directory
	is.Equal(repo.Branch, "topic")                       // its own branch
}

func TestGitVariablesIgnored(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	dir := newRepo(t, env)
	plain := tempDir(t)
	polluted := append(env,
		"GIT_DIR=/nonexistent",
		"GIT_WORK_TREE=/nonexistent",
		"GIT_CEILING_DIRECTORIES=/",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.bare", "GIT_CONFIG_VALUE_0=true",
	)
	r := newRunner(t, polluted)

	repo, err := r.Inspect(t.Context(), dir)
	is.NoErr(err)
	is.Equal(repo.TopLevel, dir) // GIT_* from the base environment redirect nothing
	is.Equal(repo.Branch, "main")

	is.NoErr(r.Init(t.Context(), plain))
	fi, err := os.Stat(filepath.Join(plain, ".git", "HEAD"))
	is.NoErr(err)
	is.True(!fi.IsDir()) // Init created the repository in dir, not at GIT_DIR
}

func TestUnusableRepositoryIsError(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, env []string, dir string)
	}{
		{"garbage HEAD", func(t *testing.T, env []string, dir string) {
			git(t, env, dir, "init", "--quiet")
			write(t, filepath.Join(dir, ".git", "HEAD"), "garbage\n")
		}},
		{"empty .git directory", func(t *testing.T, _ []string, dir string) {
			if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"broken .git file", func(t *testing.T, _ []string, dir string) {
			write(t, filepath.Join(dir, ".git"), "gitdir: /nonexistent\n")
		}},
		{"bare repository", func(t *testing.T, env []string, dir string) {
			git(t, env, dir, "init", "--quiet", "--bare")
		}},
		{"unsafe owner", func(t *testing.T, env []string, dir string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the repository another owner")
			}
			git(t, env, dir, "init", "--quiet")
			is := is.New(t)
			is.NoErr(filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				return os.Lchown(p, 65534, 65534)
			})) // owned by nobody: git refuses it as dubious
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			env := testEnv(t)
			dir := tempDir(t)
			tt.setup(t, env, dir)
			sub := filepath.Join(dir, "sub")
			is.NoErr(os.Mkdir(sub, 0o755))
			for _, d := range []string{dir, sub} {
				repo, err := newRunner(t, env).Inspect(t.Context(), d)
				is.True(err != nil)                                              // unknown, not "no repository"
				is.Equal(repo, hub.Repository{})                                 // and no half answer
				is.Equal(hub.KindOf(err), hub.Internal)                          // an internal failure
				is.Equal(hub.MessageOf(err), "git could not inspect the folder") // public text without git's output
			}
		})
	}
}

func TestGitMissing(t *testing.T) {
	is := is.New(t)
	dir := tempDir(t)
	r := gitexec.New(gitexec.Options{Git: filepath.Join(dir, "no-such-git"), Env: testEnv(t)})
	_, err := r.Inspect(t.Context(), dir)
	is.True(err != nil)                      // no git, no answer
	is.Equal(hub.KindOf(err), hub.Internal)  // an internal failure
	is.True(r.Init(t.Context(), dir) != nil) // Init fails as well
}

func TestInitNotADirectory(t *testing.T) {
	is := is.New(t)
	file := filepath.Join(tempDir(t), "file")
	write(t, file, "")
	r := newRunner(t, testEnv(t))
	is.Equal(hub.KindOf(r.Init(t.Context(), file)), hub.Invalid) // a file is no folder
	_, err := r.Inspect(t.Context(), file)
	is.Equal(hub.KindOf(err), hub.Invalid) // for Inspect either
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
