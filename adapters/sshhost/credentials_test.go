//go:build linux

package sshhost_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/sshhost"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

var brokerEpoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// childEnv is the environment of the session's child on the host, pid.
func childEnv(t *testing.T, pid int) map[string]string {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(raw), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

func TestASessionsLentKeysStayOnTheHub(t *testing.T) {
	is := is.New(t)
	sshAdd, err := exec.LookPath("ssh-add")
	if err != nil {
		t.Skip("ssh-add is not installed")
	}
	ghToken := "tok-gh-" + rand.Text() // made now: no file could hold it by chance, not even the copied binary
	v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch))
	broker := fakes.NewSessionBroker(v, fakes.NewClock(brokerEpoch))
	lentKey := unlockedSSH(t, v, "mine")
	unlockedSSH(t, v, "other") // unlocked in the vault, but not lent
	broker.LendSSH("mine")
	r := newRig(t, nil)
	rs, err := r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir(),
		Credentials: hub.SessionCredentials{Broker: broker, Tools: tools(t),
			Logins:    []hub.SessionLogin{{Host: "git.example", CredentialID: "mine", Type: hub.CredentialSSH, PublicKey: lentKey.PublicKey}},
			CLITokens: []hub.SessionCLIToken{{Tool: hub.ToolGH, Host: "github.com", CredentialID: "g", Token: []byte(ghToken)}}}})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, r.logs)
	}
	pid := sshhost.RemotePid(rs)
	folder := filepath.Join(r.root, "run", filepath.Base(strings.TrimSuffix(sshhost.RemoteSocket(rs), ".sock")))

	env := childEnv(t, pid)
	agent := env["SSH_AUTH_SOCK"]
	is.Equal(agent, filepath.Join(folder, "agent.sock")) // the session's agent is in its runtime folder on the host
	is.Equal(env["GH_TOKEN"], ghToken)                   // a CLI's token reached the child's environment
	for _, name := range []string{"GIT_CONFIG_GLOBAL", "WHARF_SESSION_CREDENTIALS"} {
		is.True(strings.HasPrefix(env[name], folder)) // git's config and the credential socket's folder are on the host
	}
	is.True(strings.Contains(env["GIT_SSH_COMMAND"], filepath.Join(folder, "ssh_config"))) // as is the generated ssh config
	_, err = os.Stat(filepath.Join(folder, "ssh_config"))
	is.NoErr(err)
	_, err = os.Stat(filepath.Join(folder, "cred.sock"))
	is.NoErr(err) // and the credential socket, forwarded
	fi, err := os.Stat(folder)
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // a private folder
	fi, err = os.Lstat(agent)
	is.NoErr(err)
	is.True(fi.Mode()&fs.ModeSocket != 0)            // the agent is a socket there
	is.Equal(fi.Mode().Perm()&0o077, os.FileMode(0)) // closed to others

	cmd := exec.Command(sshAdd, "-L")
	cmd.Env = []string{"SSH_AUTH_SOCK=" + agent}
	out, err := cmd.Output()
	is.NoErr(err) // ssh-add on the host reaches the Hub's agent through the forward
	keys := strings.Split(strings.TrimSpace(string(out)), "\n")
	is.Equal(len(keys), 1) // which holds the lent key alone
	is.Equal(strings.Join(strings.Fields(keys[0])[:2], " "), strings.Join(strings.Fields(lentKey.PublicKey)[:2], " "))

	secrets := [][]byte{[]byte(ghToken), lentKey.Sealed}
	var files int
	is.NoErr(filepath.WalkDir(r.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, s) {
				return fmt.Errorf("%s holds a secret", p)
			}
		}
		if bytes.Contains(b, []byte("PRIVATE KEY")) && filepath.Base(p) != "wharf" { // the binary names the marker
			return fmt.Errorf("%s holds a private key", p)
		}
		return nil
	})) // no file on the host holds a token or a key
	is.True(files >= 4) // among the binary, the configs and the public keys
	argv, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	is.NoErr(err)
	is.True(!bytes.Contains(argv, []byte(ghToken))) // nor the session's command line

	is.NoErr(rs.Stop(testContext(t)))
	is.True(waitGone(t, pid))
	_, err = os.Stat(folder)
	is.True(os.IsNotExist(err)) // the folder and its forwarded sockets go with the session
	cmd = exec.Command(sshAdd, "-l")
	cmd.Env = []string{"SSH_AUTH_SOCK=" + agent}
	is.True(cmd.Run() != nil) // and the agent is reachable no more
}

// tools are the credential tools a session's git needs, found on PATH;
// the host (this machine) has them at the same paths.
func tools(t *testing.T) map[hub.CredentialToolName]string {
	t.Helper()
	m := map[hub.CredentialToolName]string{}
	for name, prog := range map[hub.CredentialToolName]string{hub.ToolGit: "git", hub.ToolSSH: "ssh", hub.ToolSSHKeygen: "ssh-keygen"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Skipf("%s is not installed", prog)
		}
		m[name] = p
	}
	return m
}

// unlockedSSH makes an SSH key in v, unlocked as credential id.
func unlockedSSH(t *testing.T, v *fakes.KeyVault, id string) hub.NewKey {
	t.Helper()
	k, err := v.GenerateSSH([]byte("pass"), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(id, hub.CredentialSSH, k.Sealed, []byte("pass")); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestGitInARemoteSessionClonesOverSSHWithTheLentKey(t *testing.T) {
	is := is.New(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch))
	broker := fakes.NewSessionBroker(v, fakes.NewClock(brokerEpoch))
	lentKey := unlockedSSH(t, v, "mine")
	broker.LendSSH("mine")
	r := newRig(t, nil)
	// The sshd is the git host too: it accepts the Hub's key (the rig's
	// client) and the lent one.
	r.srv.Authorize(t, r.client.AuthorizedKey+"\n"+lentKey.PublicKey)
	repo := filepath.Join(r.root, "repo.git")
	is.NoErr(exec.Command(git, "init", "-q", "--bare", repo).Run())

	host := r.srv.Host()
	rs, err := r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir(),
		Credentials: hub.SessionCredentials{Broker: broker, Tools: tools(t),
			Logins: []hub.SessionLogin{{Host: host, CredentialID: "mine", Type: hub.CredentialSSH, PublicKey: lentKey.PublicKey}}}})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, r.logs)
	}
	t.Cleanup(func() { rs.Stop(testContext(t)) })
	env := childEnv(t, sshhost.RemotePid(rs))
	var environ []string
	for k, v := range env {
		if k == "GIT_SSH_COMMAND" {
			// ssh reads known_hosts from the account's home; the test
			// server's key is known in its own file.
			v += " -o UserKnownHostsFile=" + r.srv.KnownHosts + " -o GlobalKnownHostsFile=/dev/null"
		}
		environ = append(environ, k+"="+v)
	}
	me := r.client.User
	sessionGit := lookPath(t, env["PATH"], "git")
	is.True(strings.HasPrefix(sessionGit, filepath.Join(r.root, "run"))) // the session's git is the projection's wrapper, on the host
	dest := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command(sessionGit, "clone", "-q", fmt.Sprintf("ssh://%s@%s%s", me, host, repo), dest)
	cmd.Env = environ // the remote session's own environment, as its shell has it
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git clone: %v\n%s\nsshd: %s", err, out, r.srv)
	}
	_, err = os.Stat(filepath.Join(dest, ".git"))
	is.NoErr(err) // cloned with the key the Hub lent, through the forwarded agent

	broker.Revoke("mine")
	cmd = exec.Command(sessionGit, "ls-remote", fmt.Sprintf("ssh://%s@%s%s", me, host, repo))
	cmd.Env = environ
	is.True(cmd.Run() != nil) // and a revoked key stops logging in at once, on the host too
}

// lookPath finds name on the search path path, as a shell with that PATH
// would.
func lookPath(t *testing.T, path, name string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	t.Fatalf("%s is not on the session's PATH %s", name, path)
	return ""
}

func TestAnAdoptedSessionsAgentReachesTheNewHub(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	sshAdd, err := exec.LookPath("ssh-add")
	if err != nil {
		t.Skip("ssh-add is not installed")
	}
	lend := func() (hub.SessionCredentials, hub.NewKey) {
		v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch)) // each Hub's vault, unlocked anew
		broker := fakes.NewSessionBroker(v, fakes.NewClock(brokerEpoch))
		k := unlockedSSH(t, v, "mine")
		broker.LendSSH("mine")
		return hub.SessionCredentials{Broker: broker, Tools: tools(t),
			Logins: []hub.SessionLogin{{Host: "git.example", CredentialID: "mine", Type: hub.CredentialSSH, PublicKey: k.PublicKey}}}, k
	}
	r := newRig(t, graceOf(time.Minute))
	creds, _ := lend()
	spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir(), Credentials: creds}
	rs, err := r.host.Start(testContext(t), spec)
	is.NoErr(err)
	agent := childEnv(t, sshhost.RemotePid(rs))["SSH_AUTH_SOCK"]
	rs.(hub.SessionDetacher).Detach()
	listKeys := func() (string, error) {
		cmd := exec.Command(sshAdd, "-L")
		cmd.Env = []string{"SSH_AUTH_SOCK=" + agent}
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	_, err = listKeys()
	is.True(err != nil) // let go, the session reaches no agent

	spec.Credentials, _ = lend()
	newKey := spec.Credentials.Logins[0].PublicKey
	a, err := r.newHost(t).Adopt(testContext(t), spec)
	is.NoErr(err) // the next Hub adopts it, lending its own
	t.Cleanup(func() { a.Stop(testContext(t)) })
	keys, err := listKeys()
	is.NoErr(err)                                                                                        // and the session's agent socket, where its environment says, reaches that Hub's agent
	is.Equal(strings.Join(strings.Fields(keys)[:2], " "), strings.Join(strings.Fields(newKey)[:2], " ")) // holding the key lent now
}

func TestACommitInARemoteSessionIsSignedByTheHubsKey(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch))
	broker := fakes.NewSessionBroker(v, fakes.NewClock(brokerEpoch))
	k, err := v.GenerateOpenPGP("Ann Example <ann@example.com>", []byte("pass"))
	is.NoErr(err)
	is.NoErr(v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, []byte("pass")))
	broker.LendSigning("p")
	r := newRig(t, nil)
	repo := t.TempDir() // a folder on the host, which is this machine
	rs, err := r.host.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: repo,
		Credentials: hub.SessionCredentials{Broker: broker, Tools: tools(t),
			Signing: &hub.SessionSigning{CredentialID: "p", Type: hub.CredentialOpenPGP, PublicKey: k.PublicKey, Fingerprint: k.Fingerprint}}})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, r.logs)
	}
	t.Cleanup(func() { rs.Stop(testContext(t)) })
	env := childEnv(t, sshhost.RemotePid(rs))
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	git := func(args ...string) (string, error) {
		cmd := exec.Command(lookPath(t, env["PATH"], "git"), append([]string{"-c", "user.name=Ann", "-c", "user.email=ann@example.com"}, args...)...)
		cmd.Dir, cmd.Env = repo, environ // as the remote session's shell runs it
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	_, err = git("init", "-q")
	is.NoErr(err)
	out, err := git("commit", "-q", "--allow-empty", "-S", "-m", "signed on the host by the Hub's key")
	if err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	out, err = git("verify-commit", "--raw", "HEAD")
	is.NoErr(err)                                                      // verified on the host
	is.True(strings.Contains(out, "[GNUPG:] VALIDSIG "+k.Fingerprint)) // as the Hub's key's
	is.True(slices.ContainsFunc(broker.Uses(), func(u hub.CredentialUse) bool {
		return u.CredentialID == "p" && u.Purpose == hub.PurposeSignature
	})) // the Hub made the signature, through the forwarded socket
}

func TestARemoteSessionKeepsOnlyTheBasicsOfTheLoginsEnvironment(t *testing.T) {
	t.Parallel() // its own sshd and folders
	is := is.New(t)
	ambient := "tok-ambient-" + rand.Text()
	r := newRig(t, func(o *sshhost.Options) {
		// The login's environment on the host holds a token (the client
		// sends WHARF_TEST_* and the server accepts them) and a variable
		// the operator keeps.
		o.Env = append(os.Environ(), "WHARF_TEST_TOKEN="+ambient, "WHARF_TEST_PROXY=http://proxy.example:3128")
		o.KeepEnv = append(o.KeepEnv, "WHARF_TEST_PROXY")
	})
	rs := r.start(t, "alpha")
	env := childEnv(t, sshhost.RemotePid(rs))
	_, leaked := env["WHARF_TEST_TOKEN"]
	is.True(!leaked)                                               // the host's ambient token never reaches the session
	is.Equal(env["WHARF_TEST_PROXY"], "http://proxy.example:3128") // a variable the operator keeps does
	is.True(env["HOME"] != "" && env["PATH"] != "")                // as do the basics
	_, ssh := env["SSH_CONNECTION"]
	is.True(!ssh) // and nothing of the login itself
	_, err := sshhost.New(sshhost.Options{Name: "b", Destination: "b", RuntimeDir: shortDir(t), KeepEnv: []string{"A=B"}})
	is.True(err != nil) // a name that is no variable's is refused
}
