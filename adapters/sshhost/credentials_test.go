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

// childEnv is the environment of the session's child on the host: the
// child of the start script's shell, pid.
func childEnv(t *testing.T, pid int) map[string]string {
	t.Helper()
	kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(kids))
	if len(fields) != 1 {
		t.Fatalf("the start script has children %q, want the session alone", kids)
	}
	raw, err := os.ReadFile("/proc/" + fields[0] + "/environ")
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
