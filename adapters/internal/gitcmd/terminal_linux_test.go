package gitcmd_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// cloneOf returns a Clone into a fresh folder's "c", with its own home.
func cloneOf(t *testing.T, url string, env ...string) gitcmd.Clone {
	dir := t.TempDir()
	return gitcmd.Clone{Dir: dir, URL: url, Target: filepath.Join(dir, "c"), Home: t.TempDir(), Env: env,
		KillGrace: 200 * time.Millisecond}
}

// readAll reads the terminal to its end, within testWait.
func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	select {
	case b := <-done:
		return string(b)
	case <-time.After(testWait):
		t.Fatal("the terminal's output did not end")
		return ""
	}
}

// readUntil reads r until its output holds want, within testWait.
func readUntil(t *testing.T, r io.Reader, want string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 256)
		for !strings.Contains(b.String(), want) {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(testWait):
		t.Fatalf("no %q in the terminal's output", want)
		return ""
	}
}

// running reports whether pid is alive and not a zombie.
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

func TestACloneRunsInATerminalWithItsOwnEnvironmentOnly(t *testing.T) {
	is := is.New(t)
	git := fakeGit(t, `[ -t 0 ] && [ -t 2 ] && echo "a terminal"
echo "args: $*"
echo "home=$HOME prompt=$GIT_TERMINAL_PROMPT nosystem=$GIT_CONFIG_NOSYSTEM global=$GIT_CONFIG_GLOBAL"
echo "ambient=$SSH_AUTH_SOCK$NETRC$XDG_CONFIG_HOME$GIT_DIR$SSH_ASKPASS lent=$GIT_SSH_COMMAND"
i=0; while [ $i -lt "$GIT_CONFIG_COUNT" ]; do eval "echo config \$GIT_CONFIG_KEY_$i=\$GIT_CONFIG_VALUE_$i"; i=$((i+1)); done
`)
	r := gitcmd.New(gitcmd.Options{Git: git, Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=/ambient", "NETRC=/ambient",
		"SSH_AUTH_SOCK=/ambient", "SSH_ASKPASS=/ambient", "XDG_CONFIG_HOME=/ambient", "GIT_DIR=/ambient"}})
	c := cloneOf(t, "https://git.example/r.git", "GIT_SSH_COMMAND=ssh -F /lent")
	c.Config = []gitcmd.Setting{{Key: "credential.https://git.example.helper", Value: "!lent"}}
	term, err := r.StartClone(testContext(t), c)
	is.NoErr(err) // started
	out := readAll(t, term)
	is.NoErr(term.Wait()) // and exited 0
	for _, want := range []string{
		"a terminal",
		"args: -C " + c.Dir + " clone --progress -- https://git.example/r.git " + c.Target,
		"home=" + c.Home + " prompt=1 nosystem=1 global=/dev/null",
		"ambient= lent=ssh -F /lent",
		"config core.askPass=\r\nconfig credential.helper=\r\nconfig core.hooksPath=/dev/null\r\nconfig credential.https://git.example.helper=!lent\r\n",
		"config protocol.ext.allow=never",
	} {
		is.True(strings.Contains(out, want)) // what git sees
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestInputReachesAClonesPromptAndItsExitStatusIsReported(t *testing.T) {
	is := is.New(t)
	git := fakeGit(t, "printf 'Username: '\nread name\necho \"got $name\"\nexit 3\n")
	term, err := gitcmd.New(gitcmd.Options{Git: git}).StartClone(testContext(t), cloneOf(t, "https://h/r"))
	is.NoErr(err)
	readUntil(t, term, "Username: ")
	_, err = term.Write([]byte("ann\n"))
	is.NoErr(err) // typed
	out := readAll(t, term)
	is.True(strings.Contains(out, "got ann")) // the prompt got it
	var exit *gitcmd.Error
	is.True(errors.As(term.Wait(), &exit)) // a failure
	is.Equal(exit.Code, 3)                 // with git's status
	is.Equal(exit.Err, nil)                // and no other cause
	_, err = term.Write([]byte("late\n"))
	is.True(err != nil) // nothing more is typed once it ended
}

func TestKillEndsACloneAndEverythingItStarted(t *testing.T) {
	for _, c := range []struct {
		name, trap string
	}{
		{"a polite git", ""},
		{"a git that ignores SIGTERM", "trap '' TERM\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			git := fakeGit(t, c.trap+"sleep 60 &\necho \"child $!\"\nwhile :; do sleep 1; done\n")
			term, err := gitcmd.New(gitcmd.Options{Git: git}).StartClone(testContext(t), cloneOf(t, "https://h/r"))
			is.NoErr(err)
			line := readUntil(t, term, "\n")
			pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "child ")))
			is.NoErr(err) // the grandchild's pid
			is.True(running(pid))
			is.NoErr(term.Kill())  // killed
			is.True(!running(pid)) // the grandchild too
			is.True(!running(term.Pid()))
			var exit *gitcmd.Error
			is.True(errors.As(term.Wait(), &exit))                          // a killed git failed
			is.Equal(exit.Code, -1)                                         // without an exit status
			is.True(strings.Contains(exit.Err.Error(), "killed by signal")) // killed
			readAll(t, term)                                                // and its output ends
			is.NoErr(term.Kill())                                           // a second Kill does nothing
		})
	}
}

func TestWhatAFinishedCloneLeftInItsGroupIsKilled(t *testing.T) {
	is := is.New(t)
	// The grandchild ignores the hangup the terminal sends when git, its
	// session's leader, exits.
	git := fakeGit(t, "trap '' HUP\nsleep 60 &\necho \"child $!\"\nexit 0\n")
	term, err := gitcmd.New(gitcmd.Options{Git: git}).StartClone(testContext(t), cloneOf(t, "https://h/r"))
	is.NoErr(err)
	out := readAll(t, term) // ends although the grandchild held the terminal
	is.NoErr(term.Wait())
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "child ")))
	is.NoErr(err)          // the grandchild's pid
	is.True(!running(pid)) // is gone with git
}

func TestAStartGitcmdCannotVouchForIsRefused(t *testing.T) {
	good := func(t *testing.T) gitcmd.Clone { return cloneOf(t, "https://h/r") }
	for _, c := range []struct {
		name   string
		change func(*gitcmd.Clone)
	}{
		{"an option-like URL", func(c *gitcmd.Clone) { c.URL = "--upload-pack=touch /tmp/x" }},
		{"an empty URL", func(c *gitcmd.Clone) { c.URL = "" }},
		{"a URL spanning lines", func(c *gitcmd.Clone) { c.URL = "https://h/r\nx" }},
		{"a relative target", func(c *gitcmd.Clone) { c.Target = "c" }},
		{"a relative home", func(c *gitcmd.Clone) { c.Home = "home" }},
		{"a GIT_DIR", func(c *gitcmd.Clone) { c.Env = []string{"GIT_DIR=/x"} }},
		{"settings as variables", func(c *gitcmd.Clone) { c.Env = []string{"GIT_CONFIG_COUNT=0"} }},
		{"a HOME", func(c *gitcmd.Clone) { c.Env = []string{"HOME=/x"} }},
		{"a bad setting", func(c *gitcmd.Clone) { c.Config = []gitcmd.Setting{{Key: "nodot", Value: "x"}} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			marker := filepath.Join(t.TempDir(), "ran")
			git := fakeGit(t, ": > "+marker+"\n")
			clone := good(t)
			c.change(&clone)
			_, err := gitcmd.New(gitcmd.Options{Git: git}).StartClone(testContext(t), clone)
			is.True(errors.Is(err, gitcmd.ErrRefused)) // refused
			_, err = os.Stat(marker)
			is.True(errors.Is(err, os.ErrNotExist)) // before git ran
		})
	}
}

// A process that left git's session and group, and that no signal to the
// group reaches, cannot hold a clone's output open (a read blocked for
// ever would hold the clone job, its slot and the Hub's shutdown). One
// that opens the terminal after git exited finds it hung up already, and
// the output ends at once. One that holds it open from before git exits
// keeps it up (Linux hangs up a pseudo-terminal's other holders only
// when its master closes), so the output ends when the runner closes the
// terminal, drainDelay after git exited: that Close must end a Read
// waiting in the kernel, which it does only on a descriptor Go's poller
// watches (pollable).
func TestAnEscapedProcessHoldingTheTerminalCannotHoldTheCloneOpen(t *testing.T) {
	is := is.New(t)
	// The escapee even opens the terminal again, later.
	git := fakeGit(t, "tty=$(tty)\nsetsid sh -c \"sleep 0.3; exec sleep 60 <$tty\" &\necho \"escaped $!\"\nexit 0\n")
	term, err := gitcmd.New(gitcmd.Options{Git: git}).StartClone(testContext(t), cloneOf(t, "https://h/r"))
	is.NoErr(err)
	out := readAll(t, term) // ends, though the escapee still holds the terminal
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "escaped ")))
	is.NoErr(err) // the escapee's pid
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	is.NoErr(term.Wait()) // git succeeded
	is.NoErr(term.Kill()) // and a Kill after it returns
}

func TestAnEscapedProcessHoldingTheTerminalBeforeGitExitsCannotHoldTheCloneOpen(t *testing.T) {
	is := is.New(t)
	ready := filepath.Join(t.TempDir(), "ready")
	is.NoErr(syscall.Mkfifo(ready, 0o600))
	git := fakeGit(t, "tty=$(tty)\nsetsid sh -c \"exec 3<$tty; echo >"+ready+"; exec sleep 60\" &\necho \"escaped $!\"\nread _ <"+ready+"\nexit 0\n")
	term, err := gitcmd.New(gitcmd.Options{Git: git}).StartClone(testContext(t), cloneOf(t, "https://h/r"))
	is.NoErr(err)
	out := readAll(t, term) // ends, though the escapee held the terminal before git exited
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "escaped ")))
	is.NoErr(err) // the escapee's pid
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	is.NoErr(term.Wait()) // git succeeded
}
