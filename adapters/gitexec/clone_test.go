package gitexec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/adapters/internal/githttptest"
	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// TestMain makes the test binary Wharf too: a clone's git runs it as
// `wharf git-credential`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "git-credential" {
		if err := credenv.RunGitCredential(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "wharf git-credential:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cloneWait bounds every wait of these tests.
const cloneWait = 20 * time.Second

// stallingServer accepts requests and never answers them.
func stallingServer(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	t.Cleanup(s.Close)
	return s
}

// newCloneRunner returns a Runner whose clones keep their credentials
// under runtime, trust ca and run this test binary as Wharf.
func newCloneRunner(t *testing.T, env []string, runtime, ca string) *gitexec.Runner {
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := gitexec.New(gitexec.Options{Env: env, Logger: log, RuntimeDir: runtime, Command: []string{os.Args[0]},
		CloneCAFile: ca, CloneKillGrace: 500 * time.Millisecond})
	t.Cleanup(func() { r.Close() })
	return r
}

// runtimeDir is a private folder, as a Runner's RuntimeDir must be,
// with a short path (sockets are made in it).
func runtimeDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "wc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "rt")
}

// bareRepo makes a bare repository root/name with one commit.
func bareRepo(t *testing.T, env []string, root, name string) string {
	src := newRepo(t, env)
	is.New(t).NoErr(os.WriteFile(filepath.Join(src, "README.md"), []byte("hello\n"), 0o644))
	git(t, env, src, "add", ".")
	git(t, env, src, "commit", "--quiet", "-m", "readme")
	bare := filepath.Join(root, name)
	git(t, env, root, "clone", "--quiet", "--bare", src, bare)
	return bare
}

func TestCloneContract(t *testing.T) {
	porttest.GitClone(t, func(t *testing.T) porttest.CloneFixture {
		env := testEnv(t)
		root := tempDir(t)
		bareRepo(t, env, root, "repo.git")
		private := githttptest.New(t, root, "ann", "the-token", true)
		r := newCloneRunner(t, env, runtimeDir(t), private.CAFile(t))
		return porttest.CloneFixture{Git: r, FS: osfs.FS{}, Dir: tempDir(t),
			Source: "file://" + filepath.Join(root, "repo.git"), Failing: "file://" + filepath.Join(root, "none.git"),
			Stalling: stallingServer(t).URL + "/repo.git", Prompting: private.URL + "/repo.git",
			Prompt: "Username for 'https://" + private.Host() + "'", Answer: "ann",
			AfterAnswer: "Password for 'https://{answer}@" + private.Host() + "'"}
	})
}

// runningInGroup lists the processes of group or session id that are
// alive and not zombies, from /proc.
func runningInGroup(t *testing.T, id int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := bytes.LastIndexByte(stat, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // state ppid pgrp session ...
		if len(f) >= 4 && (f[2] == strconv.Itoa(id) || f[3] == strconv.Itoa(id)) && f[0] != "Z" && f[0] != "X" {
			out = append(out, string(stat))
		}
	}
	return out
}

// wait returns run's Wait within cloneWait.
func wait(t *testing.T, run hub.CloneRun) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(cloneWait):
		t.Fatal("the clone did not end")
		return nil
	}
}

// drain reads run to its end within cloneWait.
func drain(t *testing.T, run hub.CloneRun) string {
	t.Helper()
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(run)
		done <- b
	}()
	select {
	case b := <-done:
		return string(b)
	case <-time.After(cloneWait):
		t.Fatal("the clone's output did not end")
		return ""
	}
}

func TestAPlainPathClonesAndNothingIsLeftOfTheRun(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	root, runtime, dest := tempDir(t), runtimeDir(t), tempDir(t)
	src := bareRepo(t, env, root, "repo.git")
	r := newCloneRunner(t, env, runtime, "")
	target := filepath.Join(dest, "c")
	run, err := r.Clone(t.Context(), hub.CloneRequest{URL: src, Target: target})
	is.NoErr(err) // started
	entries, err := os.ReadDir(runtime)
	is.NoErr(err)
	is.Equal(len(entries), 1) // a folder for the clone's credentials while it runs
	out := drain(t, run)
	is.NoErr(wait(t, run))                                              // cloned
	is.True(strings.Contains(out, "Cloning into"))                      // with git's output
	is.Equal(git(t, env, target, "log", "-1", "--format=%s"), "readme") // the source's history
	is.Equal(len(runningInGroup(t, gitexec.ClonePid(run))), 0)          // nothing of it runs
	entries, err = os.ReadDir(runtime)
	is.NoErr(err)
	is.Equal(len(entries), 0) // and its folder is gone
}

func TestATokenReachesGitThroughTheProjectionAndIsStoredNowhere(t *testing.T) {
	is := is.New(t)
	const token = "tok-clone-7c1e55a0"
	env := testEnv(t)
	root, dest := tempDir(t), tempDir(t)
	bareRepo(t, env, root, "repo.git")
	server := githttptest.New(t, root, "ann", token, true)
	clock := fakes.NewClock(time.Unix(1e9, 0))
	vault := fakes.NewKeyVault(clock)
	broker := fakes.NewSessionBroker(vault, clock)
	sealed, err := vault.SealToken([]byte(token))
	is.NoErr(err)
	broker.LendToken(server.Host(), fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	// The user's own .netrc would let git in: a clone must not read it.
	home := strings.TrimPrefix(env[0], "HOME=")
	is.NoErr(os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine 127.0.0.1 login ann password netrc-secret\n"), 0o600))
	r := newCloneRunner(t, env, runtimeDir(t), server.CAFile(t))
	target := filepath.Join(dest, "c")
	run, err := r.Clone(t.Context(), hub.CloneRequest{URL: server.URL + "/repo.git", Target: target,
		Credentials: hub.SessionCredentials{Broker: broker,
			Logins: []hub.SessionLogin{{Host: server.Host(), CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}}}})
	is.NoErr(err) // started
	out := drain(t, run)
	is.NoErr(wait(t, run)) // cloned with the lent token
	if t.Failed() {
		t.Log(out)
	}
	is.Equal(git(t, env, target, "log", "-1", "--format=%s"), "readme") // the source's history
	for _, p := range server.Passwords() {
		is.True(p == token) // the server only ever got the token, never the .netrc's password
	}
	is.True(len(server.Passwords()) > 0)
	cfg, err := os.ReadFile(filepath.Join(target, ".git", "config"))
	is.NoErr(err)
	is.True(!strings.Contains(string(cfg), token))                 // the token is not in the clone's config
	is.True(strings.Contains(string(cfg), server.URL+"/repo.git")) // whose remote is the plain URL
	is.True(!strings.Contains(out, token))                         // nor in git's output
	is.Equal(len(broker.Uses()), 1)                                // asked for once, through the broker
}

func TestKillEndsAStalledCloneWithEverythingItStarted(t *testing.T) {
	is := is.New(t)
	env := testEnv(t)
	runtime := runtimeDir(t)
	r := newCloneRunner(t, env, runtime, "")
	run, err := r.Clone(t.Context(), hub.CloneRequest{URL: stallingServer(t).URL + "/repo.git", Target: filepath.Join(tempDir(t), "c")})
	is.NoErr(err) // started
	pid := gitexec.ClonePid(run)
	is.True(len(runningInGroup(t, pid)) > 0)        // git runs
	is.NoErr(run.Kill())                            // killed
	is.Equal(runningInGroup(t, pid), []string(nil)) // with all it started: nothing is left
	drain(t, run)
	is.True(strings.Contains(hub.MessageOf(wait(t, run)), "killed")) // Wait says how it ended
	entries, err := os.ReadDir(runtime)
	is.NoErr(err)
	is.Equal(len(entries), 0) // the clone's credentials are gone
}

func TestACloneThatCannotStartLeavesNothing(t *testing.T) {
	is := is.New(t)
	runtime, dest := runtimeDir(t), tempDir(t)
	r := gitexec.New(gitexec.Options{Git: filepath.Join(tempDir(t), "no-git"), Env: testEnv(t), RuntimeDir: runtime})
	_, err := r.Clone(t.Context(), hub.CloneRequest{URL: "https://h/r.git", Target: filepath.Join(dest, "c")})
	is.Equal(hub.KindOf(err), hub.Internal) // git could not start
	for _, d := range []string{runtime, dest} {
		entries, err := os.ReadDir(d)
		is.NoErr(err)
		is.Equal(len(entries), 0) // no folder of credentials, no target
	}
	_, err = r.Clone(t.Context(), hub.CloneRequest{URL: "--upload-pack=touch /tmp/x", Target: filepath.Join(dest, "c")})
	is.Equal(hub.KindOf(err), hub.Invalid) // an option-like URL is refused
}

// An agent that can write in the destination cannot send a clone
// elsewhere: a link planted at the clone's folder is refused before git
// runs, a folder swapped for another while git clones is never taken for
// the clone, and a failed clone leaves no folder. (git itself goes by the
// path: a swap to a link while it runs can still send what it writes
// through the link. The runner's cleanup never follows it.)
func TestAClonesFolderIsTheOneTheRunnerMade(t *testing.T) {
	env := testEnv(t)
	root := tempDir(t)
	src := bareRepo(t, env, root, "repo.git")
	r := newCloneRunner(t, env, runtimeDir(t), "")

	t.Run("a planted link is refused", func(t *testing.T) {
		is := is.New(t)
		dest, elsewhere := tempDir(t), tempDir(t)
		target := filepath.Join(dest, "c")
		is.NoErr(os.Symlink(elsewhere, target))
		_, err := r.Clone(t.Context(), hub.CloneRequest{URL: src, Target: target})
		is.Equal(hub.KindOf(err), hub.Conflict) // the path is taken
		entries, err := os.ReadDir(elsewhere)
		is.NoErr(err)
		is.Equal(len(entries), 0) // nothing was cloned through the link
	})

	t.Run("a failed clone leaves no folder", func(t *testing.T) {
		is := is.New(t)
		target := filepath.Join(tempDir(t), "c")
		run, err := r.Clone(t.Context(), hub.CloneRequest{URL: filepath.Join(root, "missing.git"), Target: target})
		is.NoErr(err)
		drain(t, run)
		is.True(wait(t, run) != nil) // git failed
		_, err = os.Lstat(target)
		is.True(errors.Is(err, fs.ErrNotExist)) // and its empty folder is gone
	})

	t.Run("a folder swapped while git clones is not taken for it", func(t *testing.T) {
		is := is.New(t)
		private := githttptest.New(t, root, "ann", "the-token", true)
		r := newCloneRunner(t, env, runtimeDir(t), private.CAFile(t))
		dest := tempDir(t)
		target := filepath.Join(dest, "c")
		run, err := r.Clone(t.Context(), hub.CloneRequest{URL: private.URL + "/repo.git", Target: target})
		is.NoErr(err)
		readUntil(t, run, "Username for") // git waits, in the folder the runner made
		is.NoErr(os.Rename(target, filepath.Join(dest, "moved")))
		is.NoErr(os.Mkdir(target, 0o755)) // another folder takes its place
		_, err = run.Write([]byte("ann\n"))
		is.NoErr(err)
		readUntil(t, run, "Password for")
		_, err = run.Write([]byte("the-token\n"))
		is.NoErr(err)
		drain(t, run)
		// git goes on by the path, into the new folder, and fails there or
		// finishes; either way the run is no success the Hub could register.
		is.True(wait(t, run) != nil) // not taken for the clone
	})
}

// readUntil reads run until its output holds want, within cloneWait,
// and returns what it read.
func readUntil(t *testing.T, run hub.CloneRun, want string) string {
	t.Helper()
	type read struct {
		out string
		ok  bool
	}
	done := make(chan read, 1)
	go func() {
		var out []byte
		buf := make([]byte, 4096)
		for !strings.Contains(string(out), want) {
			n, err := run.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				done <- read{string(out), strings.Contains(string(out), want)}
				return
			}
		}
		done <- read{string(out), true}
	}()
	select {
	case r := <-done:
		if !r.ok {
			t.Fatalf("the clone's output ended without %q:\n%s", want, r.out)
		}
		return r.out
	case <-time.After(cloneWait):
		t.Fatalf("the clone's output never held %q", want)
		return ""
	}
}

// A git that ignores SIGTERM and wrote part of a clone is killed after
// the grace, and what it wrote is removed, links in it included (never
// followed), since the folder is provably the one the runner made.
func TestAKilledCloneLeavesNothingOfWhatGitWrote(t *testing.T) {
	is := is.New(t)
	elsewhere := tempDir(t)
	is.NoErr(os.WriteFile(filepath.Join(elsewhere, "keep"), []byte("mine"), 0o600))
	git := fakeexec.Script(t, filepath.Join(tempDir(t), "git"), `for a; do t=$a; done
trap '' TERM
mkdir "$t/.git" "$t/sub" && echo partial > "$t/.git/HEAD" && ln -s '`+elsewhere+`' "$t/sub/link"
echo "Receiving objects: 3%"
exec sleep 60
`)
	r := gitexec.New(gitexec.Options{Git: git, Env: testEnv(t), RuntimeDir: runtimeDir(t), CloneKillGrace: 200 * time.Millisecond})
	t.Cleanup(func() { r.Close() })
	target := filepath.Join(tempDir(t), "c")
	run, err := r.Clone(t.Context(), hub.CloneRequest{URL: "https://git.example/r.git", Target: target})
	is.NoErr(err) // started
	readUntil(t, run, "Receiving objects")
	is.NoErr(run.Kill()) // killed, SIGTERM ignored
	drain(t, run)
	is.True(strings.Contains(hub.MessageOf(wait(t, run)), "killed")) // Wait says how it ended
	_, err = os.Lstat(target)
	is.True(errors.Is(err, fs.ErrNotExist)) // nothing it wrote is left
	b, err := os.ReadFile(filepath.Join(elsewhere, "keep"))
	is.NoErr(err)
	is.Equal(string(b), "mine") // and the link in it was not followed
}

// When the path was given to another folder while git ran, a failed
// clone empties the runner's own folder, wherever it was moved, and
// leaves the other as it is, naming it.
func TestAFailedCloneLeavesAFolderThatIsNotTheRunnersAndSaysSo(t *testing.T) {
	is := is.New(t)
	git := fakeexec.Script(t, filepath.Join(tempDir(t), "git"), `for a; do t=$a; done
echo early > "$t/early"
echo ready
read _
echo late > "$t/late"
exit 128
`)
	r := gitexec.New(gitexec.Options{Git: git, Env: testEnv(t), RuntimeDir: runtimeDir(t)})
	t.Cleanup(func() { r.Close() })
	dest := tempDir(t)
	target, moved := filepath.Join(dest, "c"), filepath.Join(dest, "moved")
	run, err := r.Clone(t.Context(), hub.CloneRequest{URL: "https://git.example/r.git", Target: target})
	is.NoErr(err) // started
	readUntil(t, run, "ready")
	is.NoErr(os.Rename(target, moved))
	is.NoErr(os.Mkdir(target, 0o755)) // another folder takes the path
	_, err = run.Write([]byte("\n"))
	is.NoErr(err)
	drain(t, run)
	msg := hub.MessageOf(wait(t, run))
	is.True(strings.Contains(msg, "exit status 128"))                                     // how git ended
	is.True(strings.Contains(msg, target+" is not the folder the Hub made and was left")) // and what is left where
	entries, err := os.ReadDir(moved)
	is.NoErr(err)
	is.Equal(len(entries), 0) // the runner's own folder was emptied where it went
	_, err = os.Stat(filepath.Join(target, "late"))
	is.NoErr(err) // the other folder is as git left it
}

// An SSH host the clone's ssh does not know is confirmed through the
// clone's terminal, as a person at a terminal would: the prompt shows the
// host key's fingerprint, "yes" records the key and the clone logs in
// with the lent key alone, "no" ends the clone and leaves nothing. A
// confirmed host is known to the next clone, which asks nothing.
func TestAnSSHHostKeyIsConfirmedThroughTheClonesTerminal(t *testing.T) {
	env := testEnv(t)
	root := tempDir(t)
	bareRepo(t, env, root, "repo.git")
	srv := sshdtest.Start(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	clock := fakes.NewClock(time.Unix(1e9, 0))
	vault := fakes.NewKeyVault(clock)
	broker := fakes.NewSessionBroker(vault, clock)
	key, err := vault.GenerateSSH([]byte("pass"), "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := vault.Unlock("k", hub.CredentialSSH, key.Sealed, []byte("pass")); err != nil {
		t.Fatal(err)
	}
	broker.LendSSH("k")
	srv.Authorize(t, key.PublicKey)
	creds := hub.SessionCredentials{Broker: broker,
		Tools:  map[hub.CredentialToolName]string{hub.ToolSSH: sshdtest.Find(t, "ssh", "openssh-client")},
		Logins: []hub.SessionLogin{{Host: srv.Host(), CredentialID: "k", Type: hub.CredentialSSH, PublicKey: key.PublicKey}}}
	url := fmt.Sprintf("ssh://%s@%s%s", me.Username, srv.Host(), filepath.Join(root, "repo.git"))
	const prompt = "Are you sure you want to continue connecting"
	clone := func(t *testing.T, knownHosts string) (hub.CloneRun, string) {
		r := gitexec.New(gitexec.Options{Env: env, RuntimeDir: runtimeDir(t), Command: []string{os.Args[0]}, CloneKnownHosts: knownHosts})
		t.Cleanup(func() { r.Close() })
		target := filepath.Join(tempDir(t), "c")
		run, err := r.Clone(t.Context(), hub.CloneRequest{URL: url, Target: target, Credentials: creds})
		if err != nil {
			t.Fatal(err)
		}
		return run, target
	}

	t.Run("yes records the key and clones", func(t *testing.T) {
		is := is.New(t)
		known := filepath.Join(tempDir(t), "known_hosts")
		run, target := clone(t, known)
		out := readUntil(t, run, prompt)
		is.True(strings.Contains(out, ssh.FingerprintSHA256(srv.HostKey))) // the prompt shows the host key's fingerprint
		_, err := run.Write([]byte("yes\n"))
		is.NoErr(err) // confirmed
		out = drain(t, run)
		if err := wait(t, run); err != nil {
			t.Fatalf("%v\n%s\nsshd: %s", err, out, srv)
		}
		is.Equal(git(t, env, target, "log", "-1", "--format=%s"), "readme") // cloned with the lent key
		b, err := os.ReadFile(known)
		is.NoErr(err)
		is.True(len(b) > 0) // the key is recorded

		again, target := clone(t, known)
		out = drain(t, again)
		is.NoErr(wait(t, again))                // the next clone asked nothing
		is.True(!strings.Contains(out, prompt)) // of a known host
		_, err = os.Stat(filepath.Join(target, ".git"))
		is.NoErr(err) // and cloned
	})

	t.Run("no refuses the host and leaves nothing", func(t *testing.T) {
		is := is.New(t)
		known := filepath.Join(tempDir(t), "known_hosts")
		run, target := clone(t, known)
		readUntil(t, run, prompt)
		_, err := run.Write([]byte("no\n"))
		is.NoErr(err)
		out := drain(t, run)
		is.True(wait(t, run) != nil)                                   // the clone failed
		is.True(strings.Contains(out, "Host key verification failed")) // saying why
		_, err = os.Lstat(target)
		is.True(errors.Is(err, fs.ErrNotExist)) // leaving no folder
		_, err = os.Stat(known)
		is.True(errors.Is(err, fs.ErrNotExist)) // and recording no key
	})
}
