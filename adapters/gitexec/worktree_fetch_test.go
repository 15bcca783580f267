package gitexec_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/fakeexec"
	"github.com/wharfhub/wharf/adapters/internal/githttptest"
	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// fetchScene is a worktree scene whose origin is served over HTTPS to
// "ann" with the token want, and a runner trusting the server.
type fetchScene struct {
	worktreeScene
	server  *githttptest.Server
	runtime string
	r       *gitexec.Runner
}

func newFetchScene(t *testing.T, want string) fetchScene {
	s := newWorktreeScene(t)
	server := githttptest.New(t, filepath.Dir(s.remote), "ann", want, true)
	git(t, s.env, s.main, "remote", "set-url", "origin", server.URL+"/origin.git")
	runtime := runtimeDir(t)
	return fetchScene{worktreeScene: s, server: server, runtime: runtime, r: newCloneRunner(t, s.env, runtime, server.CAFile(t))}
}

// lend lends token for the scene's server, as a workspace is lent it.
func (s fetchScene) lend(t *testing.T, token string) (hub.SessionCredentials, *fakes.SessionBroker) {
	clock := fakes.NewClock(time.Unix(1e9, 0))
	vault := fakes.NewKeyVault(clock)
	broker := fakes.NewSessionBroker(vault, clock)
	sealed, err := vault.SealToken([]byte(token))
	if err != nil {
		t.Fatal(err)
	}
	broker.LendToken(s.server.Host(), fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	return hub.SessionCredentials{Broker: broker,
		Logins: []hub.SessionLogin{{Host: s.server.Host(), CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}}}, broker
}

// runtimeEmpty reports whether no fetch left its projection behind.
func (s fetchScene) runtimeEmpty(t *testing.T) bool {
	entries, err := os.ReadDir(s.runtime)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries) == 0
}

func TestAFetchIsLentItsTokenAndStoresItNowhere(t *testing.T) {
	is := is.New(t)
	const token = "tok-fetch-5d2c81f0"
	s := newFetchScene(t, token)
	home := strings.TrimPrefix(s.env[0], "HOME=")
	write(t, filepath.Join(home, ".netrc"), "machine 127.0.0.1 login ann password netrc-secret\n") // which git must not read
	git(t, s.env, s.remote, "branch", "fresh", "main")
	creds, broker := s.lend(t, token)
	is.NoErr(s.r.Fetch(t.Context(), s.main, creds)) // fetched with the lent token
	_, remote, err := s.r.Refs(t.Context(), s.main)
	is.NoErr(err)
	is.Equal(remote, []string{"origin/feature", "origin/fresh", "origin/main"}) // bringing the new branch
	is.True(len(s.server.Passwords()) > 0)
	for _, p := range s.server.Passwords() {
		is.Equal(p, token) // the server only ever got the token
	}
	is.Equal(len(broker.Uses()), 1) // asked for once, through the broker
	cfg, err := os.ReadFile(filepath.Join(s.main, ".git", "config"))
	is.NoErr(err)
	is.True(!strings.Contains(string(cfg), token)) // the token is not in the repository's config
	is.True(s.runtimeEmpty(t))                     // and its projection is gone
}

func TestAFailedFetchSaysWhetherAuthenticationOrTheNetworkFailed(t *testing.T) {
	const token = "tok-right-0a9f"
	for _, c := range []struct {
		name  string
		lent  string // "" lends nothing
		setup func(t *testing.T, s fetchScene)
		auth  bool
	}{
		{"a refused token", "tok-wrong-77e1", nil, true},
		{"no token lent", "", nil, true},
		{"a closed port", token, func(t *testing.T, s fetchScene) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			l.Close()
			git(t, s.env, s.main, "remote", "set-url", "origin", "https://"+addr+"/origin.git")
		}, false},
		{"a missing repository", token, func(t *testing.T, s fetchScene) {
			git(t, s.env, s.main, "remote", "set-url", "origin", filepath.Join(tempDir(t), "none.git"))
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			s := newFetchScene(t, token)
			if c.setup != nil {
				c.setup(t, s)
			}
			var creds hub.SessionCredentials
			if c.lent != "" {
				creds, _ = s.lend(t, c.lent)
			}
			err := s.r.Fetch(t.Context(), s.main, creds)
			var fe *hub.FetchError
			is.True(errors.As(err, &fe))        // git ran and failed
			is.Equal(fe.Authentication, c.auth) // for credentials, or not
			for _, secret := range []string{token, c.lent} {
				is.True(secret == "" || !strings.Contains(err.Error(), secret)) // naming no token
			}
			is.True(s.runtimeEmpty(t)) // and leaving no projection
		})
	}
}

// TestAStalledFetchEndsWithEverythingItStarted: a fetch whose context
// ends is killed with its whole process group, credential projection
// included, and is the network's failure.
func TestAStalledFetchEndsWithEverythingItStarted(t *testing.T) {
	is := is.New(t)
	s := newWorktreeScene(t)
	real, err := exec.LookPath("git")
	is.NoErr(err)
	pidFile := filepath.Join(tempDir(t), "pid")
	stalling := fakeexec.Script(t, filepath.Join(tempDir(t), "git"), `case " $* " in
*" fetch "*) echo $$ > '`+pidFile+`'; sleep 60 & sleep 60; exit 0;;
esac
exec '`+real+`' "$@"
`)
	runtime := runtimeDir(t)
	r := gitexec.New(gitexec.Options{Git: stalling, Env: s.env, RuntimeDir: runtime, Command: []string{os.Args[0]}})
	t.Cleanup(func() { r.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Fetch(ctx, s.main, hub.SessionCredentials{}) }()
	select {
	case err = <-done:
	case <-time.After(cloneWait):
		t.Fatal("the fetch outlived its context")
	}
	var fe *hub.FetchError
	is.True(errors.As(err, &fe))                      // it failed
	is.True(!fe.Authentication)                       // for the network
	is.True(errors.Is(err, context.DeadlineExceeded)) // when its time was up
	b, err := os.ReadFile(pidFile)
	is.NoErr(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	is.NoErr(err)
	is.Equal(runningInGroup(t, pid), []string(nil)) // nothing it started runs
	entries, err := os.ReadDir(runtime)
	is.NoErr(err)
	is.Equal(len(entries), 0) // and its credentials are gone
}

// TestAnSSHFetchSaysWhetherItsKeyWasRefused: over SSH, a fetch is lent
// its key through the projection's agent; a refused key is an
// authentication failure, a port nobody listens on the network's.
func TestAnSSHFetchSaysWhetherItsKeyWasRefused(t *testing.T) {
	sshPath := sshdtest.Find(t, "ssh", "openssh-client")
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, c := range []struct {
		name       string
		closed     bool
		authorized bool
		ok, auth   bool
	}{
		{"an authorized key", false, true, true, false},
		{"a refused key", false, false, false, true},
		{"a closed port", true, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			srv := sshdtest.Start(t) // each its own: the fake vault's keys may repeat
			host := srv.Host()
			if c.closed {
				host = closed
			}
			s := newWorktreeScene(t)
			git(t, s.env, s.remote, "branch", "fresh", "main")
			git(t, s.env, s.main, "remote", "set-url", "origin", "ssh://"+me.Username+"@"+host+s.remote)
			clock := fakes.NewClock(time.Unix(1e9, 0))
			vault := fakes.NewKeyVault(clock)
			broker := fakes.NewSessionBroker(vault, clock)
			key, err := vault.GenerateSSH([]byte("pass"), "k")
			is.NoErr(err)
			is.NoErr(vault.Unlock("k", hub.CredentialSSH, key.Sealed, []byte("pass")))
			broker.LendSSH("k")
			if c.authorized {
				srv.Authorize(t, key.PublicKey)
			}
			runtime := runtimeDir(t)
			r := gitexec.New(gitexec.Options{Env: s.env, RuntimeDir: runtime, Command: []string{os.Args[0]}, CloneKnownHosts: srv.KnownHosts})
			t.Cleanup(func() { r.Close() })
			err = r.Fetch(t.Context(), s.main, hub.SessionCredentials{Broker: broker,
				Tools:  map[hub.CredentialToolName]string{hub.ToolSSH: sshPath},
				Logins: []hub.SessionLogin{{Host: host, CredentialID: "k", Type: hub.CredentialSSH, PublicKey: key.PublicKey}}})
			if c.ok {
				is.NoErr(err) // fetched with the lent key
				_, remote, err := r.Refs(t.Context(), s.main)
				is.NoErr(err)
				is.True(slices.Contains(remote, "origin/fresh")) // the new branch
				return
			}
			var fe *hub.FetchError
			is.True(errors.As(err, &fe))        // git ran and failed
			is.Equal(fe.Authentication, c.auth) // for the key, or not
			entries, err := os.ReadDir(runtime)
			is.NoErr(err)
			is.Equal(len(entries), 0) // leaving no projection
		})
	}
}

// TestAFetchKeepsPackedRefsAndAShallowHistoryWhole: what a fetch
// writes through the shadow lands in the repository — packed refs
// updated as loose ones, a shallow clone's boundary — and a branch gone
// from the remote is not pruned (pruning would rewrite packed-refs over
// the shadow's link).
func TestAFetchKeepsPackedRefsAndAShallowHistoryWhole(t *testing.T) {
	for _, shallow := range []bool{false, true} {
		t.Run(map[bool]string{false: "packed refs", true: "a shallow clone"}[shallow], func(t *testing.T) {
			is := is.New(t)
			s := newWorktreeScene(t)
			if shallow {
				main := filepath.Join(tempDir(t), "shallow")
				git(t, s.env, s.dir, "clone", "--quiet", "--depth=1", "--no-single-branch", "file://"+s.remote, main)
				s.main = main
			}
			git(t, s.env, s.main, "pack-refs", "--all")
			work := filepath.Join(tempDir(t), "work")
			git(t, s.env, s.dir, "clone", "--quiet", s.remote, work)
			git(t, s.env, work, "commit", "--quiet", "--allow-empty", "-m", "next")
			git(t, s.env, work, "push", "--quiet", "origin", "main")
			git(t, s.env, s.remote, "branch", "-D", "feature")
			packed, err := os.ReadFile(filepath.Join(s.main, ".git", "packed-refs"))
			is.NoErr(err)
			r := newRunner(t, s.env)
			is.NoErr(r.Fetch(t.Context(), s.main, hub.SessionCredentials{}))                   // fetched
			is.Equal(git(t, s.env, s.main, "log", "-1", "--format=%s", "origin/main"), "next") // the new commit, read by git itself
			after, err := os.ReadFile(filepath.Join(s.main, ".git", "packed-refs"))
			is.NoErr(err)
			is.Equal(string(after), string(packed)) // packed-refs untouched
			_, remote, err := r.Refs(t.Context(), s.main)
			is.NoErr(err)
			is.True(slices.Contains(remote, "origin/feature"))                    // nothing pruned
			git(t, s.env, s.main, "fsck", "--no-progress", "--connectivity-only") // and the repository whole
		})
	}
}
