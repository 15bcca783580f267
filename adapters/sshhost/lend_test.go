//go:build linux

package sshhost_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/adapters/internal/githttptest"
	"github.com/wharfhub/wharf/adapters/internal/hostop"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// Clones onto the host: hostop's clone over a real sshd, the host's git
// lent a key held on the Hub. git reaches its "server" through a
// stand-in ssh first on the host's PATH, which records what the agent it
// was lent holds (and, for ask.example, asks a question on the terminal)
// and then runs git's command on the host itself; for stall.example it
// hangs, as a server that never answers.

// standInSSH writes the stand-in ssh into a new folder, which the clone
// server puts first on PATH, and returns the file it records in.
func standInSSH(t *testing.T) string {
	t.Helper()
	dir := shortDir(t)
	log := filepath.Join(dir, "log")
	script := `#!/bin/sh
log='` + log + `'
for a; do last=$a; host=$prev; prev=$a; done
echo "pid $$" >> "$log"
SSH_AUTH_SOCK="$SSH_AUTH_SOCK" ssh-add -L >> "$log" 2>&1
case "$host" in
  stall.example) exec sleep 120 ;;
  ask.example) printf 'Password for ask.example: ' > /dev/tty; IFS= read -r a < /dev/tty; echo "answer $a" >> "$log" ;;
esac
exec sh -c "$last"
`
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(pathEnv, dir)
	return log
}

// bareRepo is a bare repository holding one commit of README.md.
func bareRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	src, bare := filepath.Join(dir, "src"), filepath.Join(dir, "repo.git")
	run := func(dir string, args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(dir, "init", "-q", "-b", "main", src)
	if err := os.WriteFile(filepath.Join(src, "README.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(src, "add", ".")
	run(src, "commit", "-q", "-m", "readme")
	run(dir, "clone", "-q", "--bare", src, bare)
	return bare
}

// cloner is a hostop client whose clones run on r's host.
func (r *rig) cloner() *hostop.Client {
	c := hostop.NewClient(hostop.Options{Lend: func(ctx context.Context, creds hub.SessionCredentials, args ...string) (hostop.LentStream, gitcmd.Lent, error) {
		l, lent, err := r.host.Lend(ctx, creds, args...)
		if err != nil {
			return nil, lent, err
		}
		return l, lent, nil
	}})
	return c
}

// lentKey lends the host's clone a key for host, held in a fake vault.
func lentKey(t *testing.T, host string) (hub.SessionCredentials, hub.NewKey) {
	t.Helper()
	v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch))
	broker := fakes.NewSessionBroker(v, fakes.NewClock(brokerEpoch))
	key := unlockedSSH(t, v, "mine")
	broker.LendSSH("mine")
	return hub.SessionCredentials{Broker: broker,
		Logins: []hub.SessionLogin{{Host: host, CredentialID: "mine", Type: hub.CredentialSSH, PublicKey: key.PublicKey}}}, key
}

// readFor reads run's terminal until it has shown want.
func readFor(t *testing.T, run hub.CloneRun, want string) string {
	t.Helper()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	deadline := time.Now().Add(testTimeout)
	for !strings.Contains(got.String(), want) && time.Now().Before(deadline) {
		n, err := run.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if !strings.Contains(got.String(), want) {
		t.Fatalf("the terminal never showed %q; it showed %q", want, got.String())
	}
	return got.String()
}

// leftovers lists what is in the host's runtime folder and in the Hub's,
// but the master's control socket.
func (r *rig) leftovers(t *testing.T) []string {
	t.Helper()
	var left []string
	for _, dir := range []string{filepath.Join(r.root, "run"), r.opts.RuntimeDir} {
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "cm-") { // the master's control socket

				left = append(left, filepath.Join(dir, e.Name()))
			}
		}
	}
	return left
}

func TestACloneOnTheHostAsksThroughItsTerminalWithTheLentKeyAndLeavesNothing(t *testing.T) {
	is := is.New(t)
	log := standInSSH(t)
	bare := bareRepo(t)
	creds, key := lentKey(t, "ask.example")
	r := newRig(t, nil)
	target := filepath.Join(t.TempDir(), "copy")

	run, err := r.cloner().Clone(testContext(t), hub.CloneRequest{URL: "ssh://ask.example" + bare, Target: target, Credentials: creds})
	is.NoErr(err) // the clone started on the host
	readFor(t, run, "Password for ask.example: ")
	_, err = run.Write([]byte("opensesame\n"))
	is.NoErr(err) // an answer typed on the Hub
	_, err = io.Copy(io.Discard, run)
	is.NoErr(err)
	is.NoErr(run.Wait()) // git succeeded there

	readme, err := os.ReadFile(filepath.Join(target, "README.md"))
	is.NoErr(err)
	is.Equal(string(readme), "hello\n") // the repository is cloned into the target on the host
	recorded, err := os.ReadFile(log)
	is.NoErr(err)
	is.True(strings.Contains(string(recorded), "answer opensesame"))                                  // the answer reached the prompt on the host's terminal
	is.True(strings.Contains(string(recorded), strings.Join(strings.Fields(key.PublicKey)[:2], " "))) // git's ssh there was lent the key, through the agent forwarded from the Hub
	is.Equal(r.leftovers(t), []string(nil))                                                           // no credentials folder is left on either end
}

func TestKillingACloneOnTheHostEndsGitThereAndLeavesNothing(t *testing.T) {
	is := is.New(t)
	log := standInSSH(t)
	creds, _ := lentKey(t, "stall.example")
	r := newRig(t, nil)
	target := filepath.Join(t.TempDir(), "copy")

	run, err := r.cloner().Clone(testContext(t), hub.CloneRequest{URL: "ssh://stall.example/x.git", Target: target, Credentials: creds})
	is.NoErr(err)
	var pid int
	for deadline := time.Now().Add(testTimeout); pid == 0 && time.Now().Before(deadline); {
		b, _ := os.ReadFile(log)
		if v, ok := strings.CutPrefix(strings.SplitN(string(b), "\n", 2)[0], "pid "); ok {
			pid, _ = strconv.Atoi(v)
		}
		if pid == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	is.True(pid > 0) // git reached its stand-in server
	go func() { _, _ = io.Copy(io.Discard, run) }()

	is.NoErr(run.Kill())
	err = run.Wait()
	is.True(err != nil)                                        // a killed clone failed
	is.True(strings.Contains(hub.MessageOf(err), "git clone")) // and says how, in git's terms
	is.True(waitGone(t, pid))                                  // what git started there is gone
	_, err = os.Lstat(target)
	is.True(errors.Is(err, os.ErrNotExist)) // and so is the folder it cloned into
	is.Equal(r.leftovers(t), []string(nil)) // and the credentials' folders
}

func TestACloneOnTheHostIsRefusedWhereTheTargetExists(t *testing.T) {
	is := is.New(t)
	r := newRig(t, nil)
	target := t.TempDir()
	_, err := r.cloner().Clone(testContext(t), hub.CloneRequest{URL: "ssh://git.example/x.git", Target: target})
	is.Equal(hub.KindOf(err), hub.Conflict) // the host's gitexec refused it, and the refusal kept its kind
	is.Equal(r.leftovers(t), []string(nil)) // nothing was left
}

// hostClones is git on this machine but for its clones, which run on the
// rig's host (the same machine, reached over ssh): the clone contract
// inspects what a clone made.
type hostClones struct {
	hub.GitRunner
	c *hostop.Client
}

func (g hostClones) Clone(ctx context.Context, req hub.CloneRequest) (hub.CloneRun, error) {
	return g.c.Clone(ctx, req)
}

func TestClonesOnTheHostKeepTheCloneContract(t *testing.T) {
	bare := bareRepo(t)
	root := filepath.Dir(bare)
	private := githttptest.New(t, root, "ann", "the-token", true)
	stalling := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(stalling.Close)
	t.Setenv(caEnv, private.CAFile(t))
	r := newRig(t, nil)
	local := gitexec.New(gitexec.Options{Env: []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}})
	t.Cleanup(func() { local.Close() })
	porttest.GitClone(t, func(t *testing.T) porttest.CloneFixture {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return porttest.CloneFixture{Git: hostClones{local, r.cloner()}, FS: osfs.FS{}, Dir: dir,
			Source: "file://" + bare, Failing: "file://" + filepath.Join(root, "none.git"),
			Stalling: stalling.URL + "/repo.git", Prompting: private.URL + "/repo.git",
			Prompt: "Username for 'https://" + private.Host() + "'", Answer: "ann",
			AfterAnswer: "Password for 'https://{answer}@" + private.Host() + "'"}
	})
}

// lentToken lends token for host, as a workspace is lent it.
func lentToken(t *testing.T, host, token string) (hub.SessionCredentials, *fakes.SessionBroker) {
	t.Helper()
	clock := fakes.NewClock(brokerEpoch)
	vault := fakes.NewKeyVault(clock)
	broker := fakes.NewSessionBroker(vault, clock)
	sealed, err := vault.SealToken([]byte(token))
	if err != nil {
		t.Fatal(err)
	}
	broker.LendToken(host, fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	return hub.SessionCredentials{Broker: broker,
		Logins: []hub.SessionLogin{{Host: host, CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}}}, broker
}

func TestAFetchOnTheHostIsLentItsTokenAndTellsARefusalFromTheNetwork(t *testing.T) {
	is := is.New(t)
	const token = "tok-fetch-on-host-81c2"
	bare := bareRepo(t)
	private := githttptest.New(t, filepath.Dir(bare), "ann", token, true)
	t.Setenv(caEnv, private.CAFile(t))
	main := filepath.Join(t.TempDir(), "main")
	for _, args := range [][]string{{"clone", "-q", bare, main}, {"-C", main, "remote", "set-url", "origin", private.URL + "/repo.git"},
		{"-C", bare, "branch", "fresh", "main"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r := newRig(t, nil)
	c := r.cloner()

	creds, broker := lentToken(t, private.Host(), token)
	is.NoErr(c.Fetch(testContext(t), main, creds)) // fetched on the host with the lent token
	out, err := exec.Command("git", "-C", main, "branch", "-r").Output()
	is.NoErr(err)
	is.True(strings.Contains(string(out), "origin/fresh")) // bringing the new branch
	is.Equal(len(broker.Uses()), 1)                        // the token asked of the Hub, once
	for _, p := range private.Passwords() {
		is.Equal(p, token) // the server only ever got the token
	}

	wrong, _ := lentToken(t, private.Host(), "tok-wrong-5e0d")
	err = c.Fetch(testContext(t), main, wrong)
	var fe *hub.FetchError
	is.True(errors.As(err, &fe)) // git ran there and failed
	is.True(fe.Authentication)   // for the credentials: the Hub saw the token asked for
	is.True(!strings.Contains(err.Error(), "tok-wrong-5e0d"))
	is.Equal(r.leftovers(t), []string(nil)) // nothing is left on either end
}
