package gitcmd_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// testWait bounds every wait of these tests.
const testWait = 10 * time.Second

// fakeGit writes a shell script standing for git and returns its path.
func fakeGit(t *testing.T, script string) string {
	t.Helper()
	return fakeexec.Script(t, filepath.Join(t.TempDir(), "git"), script)
}

// testContext ends with the test or after testWait.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testWait)
	t.Cleanup(cancel)
	return ctx
}

func TestRun(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	git := fakeGit(t, `printf '%s\n' "$@"; pwd; echo "LC_ALL=$LC_ALL GIT_DIR=$GIT_DIR"; cat; echo oops >&2; exit 3`)
	r := gitcmd.New(gitcmd.Options{Git: git, Env: []string{"GIT_DIR=/elsewhere", "PATH=" + os.Getenv("PATH")},
		Args: []string{"--no-optional-locks"}})
	res, err := r.Run(testContext(t), "/some/dir", "init", "-q")
	is.NoErr(err)                                   // a non-zero status is no error
	is.Equal(res.Code, 3)                           // the status is reported
	is.Equal(string(res.Stderr), "oops\n")          // with the stderr, for logs
	is.Equal(string(res.Stdout), "-C\n/some/dir\n"+ // -C dir first
		"--no-optional-locks\n"+ // then the global options
		"init\n-q\n"+ // then the command's own
		"/\n"+ // in the root, whatever our directory
		"LC_ALL=C GIT_DIR=\n") // with the scrubbed environment, and an empty stdin

	res, err = r.Run(testContext(t), "", "version")
	is.NoErr(err)                                                           // ran
	is.True(strings.HasPrefix(string(res.Stdout), "--no-optional-locks\n")) // without -C when there is no directory
}

// TestRunTakesOnlyCommandsOutsideARepository: a command that reads a
// repository must run through RunIn, which keeps its config's programs
// away; Run refuses it before anything starts.
func TestRunTakesOnlyCommandsOutsideARepository(t *testing.T) {
	t.Parallel()
	r := gitcmd.New(gitcmd.Options{Git: filepath.Join(t.TempDir(), "never-run")})
	for _, args := range [][]string{{"status"}, {"log"}, {"rev-parse", "HEAD"}, {"-C", "/x", "init"}, {"--git-dir=/x", "init"}, {}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			is := is.New(t)
			_, err := r.Run(testContext(t), "/w", args...)
			is.True(errors.Is(err, gitcmd.ErrRefused)) // refused
		})
	}
}

// TestRunInGivesGitTheRepositoryAndAShadow checks the command line and
// environment RunIn gives git, with a fake git that prints them.
func TestRunInGivesGitTheRepositoryAndAShadow(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	git := fakeGit(t, `printf '%s\n' "$@"; env | grep '^GIT_' | sort; ls "$GIT_COMMON_DIR"; cat "$GIT_COMMON_DIR/config"`)
	common := filepath.Join(t.TempDir(), "repo.git")
	is.NoErr(os.MkdirAll(filepath.Join(common, "hooks"), 0o755))
	is.NoErr(os.WriteFile(filepath.Join(common, "config"), []byte("[core]\n\tbare = false\n\tfilemode = true\n[filter \"x\"]\n\tclean = evil\n"), 0o600))
	tmp := t.TempDir()
	r := gitcmd.New(gitcmd.Options{Git: git, Env: []string{"GIT_COMMON_DIR=/elsewhere", "PATH=" + os.Getenv("PATH")},
		Config: []gitcmd.Setting{{Key: "core.sshCommand", Value: "wharf-ssh"}}, ShadowDir: tmp})
	repo := gitcmd.Repo{Top: "/w", GitDir: filepath.Join(common, "worktrees", "w"), CommonDir: common}
	res, err := r.RunIn(testContext(t), repo, "/w/sub", "status", "-z")
	is.NoErr(err) // ran
	out := string(res.Stdout)
	args, rest, _ := strings.Cut(out, "GIT_COMMON_DIR=")
	is.Equal(args, "-C\n/w/sub\nstatus\n--ignore-submodules=dirty\n-z\n") // in dir, kept out of submodules
	shadow, rest, _ := strings.Cut(rest, "\n")
	is.Equal(filepath.Dir(filepath.Dir(shadow)), tmp)                                                                         // a shadow common directory in ShadowDir
	is.True(strings.Contains(rest, "GIT_CONFIG_KEY_0=core.sshCommand\n"))                                                     // Wharf's own settings first
	is.True(strings.Contains(rest, "GIT_CONFIG_VALUE_0=wharf-ssh\n"))                                                         // with their values
	is.True(strings.Contains(out, "GIT_CONFIG_COUNT=8\n") && strings.Contains(rest, "GIT_CONFIG_KEY_7=protocol.ext.allow\n")) // then the fixed ones, last
	is.True(strings.Contains(rest, "GIT_DIR="+repo.GitDir+"\n"))                                                              // the repository's git directory
	is.True(strings.Contains(rest, "GIT_OBJECT_DIRECTORY="+common+"/objects\n"))                                              // its objects
	is.True(strings.Contains(rest, "GIT_WORK_TREE=/w\n"))                                                                     // its work tree
	is.True(strings.Contains(rest, "\nobjects\n") && strings.Contains(rest, "\nrefs\n"))                                      // the common entries, linked
	is.True(!strings.Contains(rest, "\nhooks\n"))                                                                             // but the hooks
	is.True(strings.HasSuffix(rest, "[core]\n\tfilemode = \"true\"\n"))                                                       // and a config of the kept settings only

	is.NoErr(os.WriteFile(filepath.Join(common, "config"), []byte("[core]\n\tfilemode = false\n[core]\n\tpager = evil\n"), 0o600))
	res, err = r.RunIn(testContext(t), repo, "", "log")
	is.NoErr(err) // ran again
	_, again, _ := strings.Cut(string(res.Stdout), "GIT_COMMON_DIR=")
	is.True(strings.HasPrefix(again, shadow+"\n"))                        // in the same shadow
	is.True(strings.HasSuffix(again, "[core]\n\tfilemode = \"false\"\n")) // whose config follows the repository's
	is.NoErr(r.Close())
	ents, err := os.ReadDir(tmp)
	is.NoErr(err)          // the ShadowDir is there
	is.Equal(len(ents), 0) // and the shadows are gone after Close
}

func TestRunBoundsOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"on success", 0},
		{"on failure", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			git := fakeGit(t, `head -c 100 /dev/zero; head -c 5000 /dev/zero | tr '\0' e >&2; exit `+string(rune('0'+tc.status)))
			r := gitcmd.New(gitcmd.Options{Git: git, MaxStdout: 64, StderrTail: 10})
			_, err := r.Run(testContext(t), "", "version")
			var e *gitcmd.Error
			is.True(errors.As(err, &e))                         // a command error
			is.True(errors.Is(err, gitcmd.ErrOutputTooLarge))   // for its stdout over the bound
			is.Equal(e.Code, tc.status)                         // with its status
			is.Equal(string(e.Stderr), strings.Repeat("e", 10)) // and the tail of its stderr only
		})
	}
	t.Run("at the bound", func(t *testing.T) {
		is := is.New(t)
		r := gitcmd.New(gitcmd.Options{Git: fakeGit(t, `head -c 64 /dev/zero`), MaxStdout: 64})
		res, err := r.Run(testContext(t), "", "version")
		is.NoErr(err)                 // what fits is kept
		is.Equal(len(res.Stdout), 64) // whole
	})
}

func TestRunWithoutGit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	r := gitcmd.New(gitcmd.Options{Git: filepath.Join(t.TempDir(), "no-git")})
	_, err := r.Run(testContext(t), "", "version")
	var e *gitcmd.Error
	is.True(errors.As(err, &e))             // a command error
	is.Equal(e.Code, -1)                    // git never exited
	is.True(errors.Is(err, os.ErrNotExist)) // because it is not there
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := gitcmd.New(gitcmd.Options{Git: fakeGit(t, "exit 0")})
	_, err := r.Run(ctx, "", "version")
	is.True(errors.Is(err, context.Canceled))   // the caller's end is reported
	is.True(!errors.Is(err, gitcmd.ErrTimeout)) // as no timeout
}

// TestIsolateConfig runs real git: the user's global config applies unless
// the runner isolates commands from it.
func TestIsolateConfig(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Global Ann\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "PATH=" + os.Getenv("PATH")}
	for _, tc := range []struct {
		name    string
		isolate bool
		code    int
		out     string
	}{
		{"the user's config", false, 0, "Global Ann\n"},
		{"isolated", true, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := gitcmd.New(gitcmd.Options{Env: env, IsolateConfig: tc.isolate})
			res, err := r.Run(testContext(t), home, "init", "-q")
			is.NoErr(err)         // a repository
			is.Equal(res.Code, 0) // is made
			repo, _, err := r.Discover(testContext(t), home)
			is.NoErr(err) // and found
			res, err = r.RunIn(testContext(t), repo, "", "config", "--get", "user.name")
			is.NoErr(err)                        // ran
			is.Equal(res.Code, tc.code)          // the setting is found or not
			is.Equal(string(res.Stdout), tc.out) // and read only when not isolated
		})
	}
}

// A process that crashed leaves its shadows (a remote's URL among their
// settings) in its ShadowDir: the next Runner there removes them, and
// nothing else, before it makes its own.
func TestAShadowDirLeftByACrashIsCleanedAtFirstUse(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	git := fakeGit(t, `exit 0`)
	common := filepath.Join(t.TempDir(), "repo.git")
	is.NoErr(os.MkdirAll(common, 0o755))
	is.NoErr(os.WriteFile(filepath.Join(common, "config"), []byte("[core]\n\tbare = false\n"), 0o600))
	dir := filepath.Join(t.TempDir(), "git") // not there yet
	crashed := gitcmd.New(gitcmd.Options{Git: git, ShadowDir: dir})
	repo := gitcmd.Repo{Top: "/w", GitDir: common, CommonDir: common}
	_, err := crashed.RunIn(testContext(t), repo, "", "status")
	is.NoErr(err) // the first process ran, and never closed its Runner
	st, err := os.Stat(dir)
	is.NoErr(err)                                  // the ShadowDir was made
	is.Equal(st.Mode().Perm(), os.FileMode(0o700)) // private
	is.NoErr(os.WriteFile(filepath.Join(dir, "other"), nil, 0o600))

	next := gitcmd.New(gitcmd.Options{Git: git, ShadowDir: dir})
	_, err = next.RunIn(testContext(t), repo, "", "status")
	is.NoErr(err) // the next one runs
	ents, err := os.ReadDir(dir)
	is.NoErr(err)
	names := []string{}
	for _, e := range ents {
		names = append(names, e.Name())
	}
	is.Equal(len(names), 2)                  // its own shadows and the foreign file
	is.True(slices.Contains(names, "other")) // what is not a shadow stays
	is.NoErr(next.Close())
}

// A remote's URL may carry a token (https://user:token@host/…); the
// shadow's config, a file a crash may leave in a temporary directory,
// keeps the remote without it.
func TestAShadowHoldsNoCredentialOfARemote(t *testing.T) {
	t.Parallel()
	git := fakeGit(t, `cat "$GIT_COMMON_DIR/config"`)
	common := filepath.Join(t.TempDir(), "repo.git")
	for _, tc := range []struct{ url, want string }{
		{"https://ann:ghp_secret@example.com/ann/x.git", "https://example.com/ann/x.git"},
		{"https://ghp_secret@example.com/ann/x.git", "https://example.com/ann/x.git"},
		{"ssh://git@example.com/ann/x.git", "ssh://example.com/ann/x.git"},
		{"git@example.com:ann/x.git", "git@example.com:ann/x.git"}, // scp-like: a user name, no secret
		{"https://example.com/ann/x.git", "https://example.com/ann/x.git"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			is := is.New(t)
			is.NoErr(os.MkdirAll(common, 0o755))
			cfg := "[remote \"origin\"]\n\turl = " + tc.url + "\n\tpushurl = " + tc.url + "\n"
			is.NoErr(os.WriteFile(filepath.Join(common, "config"), []byte(cfg), 0o600))
			r := gitcmd.New(gitcmd.Options{Git: git, ShadowDir: t.TempDir()})
			defer r.Close()
			res, err := r.RunIn(testContext(t), gitcmd.Repo{Top: "/w", GitDir: common, CommonDir: common}, "", "status")
			is.NoErr(err) // ran
			out := string(res.Stdout)
			is.True(!strings.Contains(out, "secret"))               // no credential reaches the shadow
			is.Equal(strings.Count(out, strconv.Quote(tc.want)), 2) // the remote is kept, url and pushurl
		})
	}
}
