package gitcmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// envGit is a fake git that prints its arguments and environment.
const envGit = `printf 'arg %s\n' "$@"; env`

// fakeRepo is a Repo RunIn takes: absolute folders holding no config.
func fakeRepo(t *testing.T) gitcmd.Repo {
	d := t.TempDir()
	return gitcmd.Repo{Top: d, GitDir: filepath.Join(d, ".git"), CommonDir: filepath.Join(d, ".git")}
}

// TestALentCommandGetsOnlyWhatItIsLent: a command run with credentials
// lent gets a clone's environment with prompts off — none of the
// Runner's ambient credentials, no user config, the lent HOME, the
// projection's variables and settings — and still its repository
// through the shadow.
func TestALentCommandGetsOnlyWhatItIsLent(t *testing.T) {
	is := is.New(t)
	home := t.TempDir()
	r := gitcmd.New(gitcmd.Options{Git: fakeGit(t, envGit), ShadowDir: t.TempDir(), Env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/ann", "SSH_AUTH_SOCK=/ambient/agent", "NETRC=/home/ann/.netrc",
		"SSH_ASKPASS=/usr/bin/askpass", "XDG_CONFIG_HOME=/home/ann/.config"}})
	repo := fakeRepo(t)
	res, err := r.RunInWith(testContext(t), repo, "", gitcmd.With{Lent: &gitcmd.Lent{Home: home,
		Env:    []string{"GIT_SSH_COMMAND=ssh -F /x/ssh_config", "GIT_ASKPASS=/x/askpass", "SSH_AUTH_SOCK=/x/agent.sock"},
		Config: []gitcmd.Setting{{Key: "credential.https://h.helper", Value: "!wharf git-credential"}}}}, "fetch", "--all")
	is.NoErr(err) // ran
	out := string(res.Stdout)
	for _, want := range []string{"\nHOME=" + home + "\n", "\nGIT_TERMINAL_PROMPT=0\n", "\nGIT_CONFIG_GLOBAL=/dev/null\n",
		"\nGIT_SSH_COMMAND=ssh -F /x/ssh_config\n", "\nGIT_ASKPASS=/x/askpass\n", "\nSSH_AUTH_SOCK=/x/agent.sock\n",
		"=credential.https://h.helper\n", "\nGIT_DIR=" + repo.GitDir + "\n", "\nGIT_WORK_TREE=" + repo.Top + "\n", "\narg fetch\n"} {
		is.True(strings.Contains("\n"+out, want)) // what the command is lent, and its repository
	}
	for _, gone := range []string{"/home/ann", "/ambient/agent", "NETRC", "SSH_ASKPASS", "XDG_CONFIG_HOME"} {
		is.True(!strings.Contains(out, gone)) // and nothing ambient
	}

	for _, bad := range []string{"HOME=/elsewhere", "GIT_DIR=/elsewhere", "GIT_CONFIG_COUNT=1", "NOEQUALS"} {
		_, err := r.RunInWith(testContext(t), repo, "", gitcmd.With{Lent: &gitcmd.Lent{Home: home, Env: []string{bad}}}, "fetch")
		is.True(errors.Is(err, gitcmd.ErrRefused)) // a variable that could redirect git is refused
	}
	_, err = r.RunInWith(testContext(t), repo, "", gitcmd.With{Lent: &gitcmd.Lent{Home: "relative"}}, "fetch")
	is.True(errors.Is(err, gitcmd.ErrRefused)) // and so is a relative HOME
}

// TestACommandsOwnBoundsReplaceTheRunners: With's timeout and output
// bound apply to its command alone.
func TestACommandsOwnBoundsReplaceTheRunners(t *testing.T) {
	is := is.New(t)
	r := gitcmd.New(gitcmd.Options{Git: fakeGit(t, `case "$*" in *slow*) exec sleep 60;; esac; head -c 3000 /dev/zero`),
		ShadowDir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: time.Minute, MaxStdout: 1000})
	repo := fakeRepo(t)
	start := time.Now()
	_, err := r.RunInWith(testContext(t), repo, "", gitcmd.With{Timeout: 100 * time.Millisecond}, "slow")
	is.True(errors.Is(err, gitcmd.ErrTimeout))  // its own timeout
	is.True(time.Since(start) < 30*time.Second) // well before the Runner's
	_, err = r.RunIn(testContext(t), repo, "", "fast")
	is.True(errors.Is(err, gitcmd.ErrOutputTooLarge)) // the Runner's bound
	res, err := r.RunInWith(testContext(t), repo, "", gitcmd.With{MaxStdout: 4000}, "fast")
	is.NoErr(err)                   // its own
	is.Equal(len(res.Stdout), 3000) // keeps the whole answer
}
