package local_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

// sshServer is OpenSSH's sshd on a loopback port, started by the test
// without privileges of its own: the test accepts each connection and
// hands it to a new `sshd -i` (inetd mode), with a throwaway host key and
// an authorized_keys file the test writes.
type sshServer struct {
	port       int
	authorized string // the authorized_keys file
	knownHosts string // a known_hosts file naming the server's host key
	mu         sync.Mutex
	log        strings.Builder
}

func (s *sshServer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

func (s *sshServer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// authorize makes the server accept exactly the key line given.
func (s *sshServer) authorize(t *testing.T, line string) {
	t.Helper()
	if err := os.WriteFile(s.authorized, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func startSSHD(t *testing.T) *sshServer {
	t.Helper()
	sshd := tool(t, "sshd", "openssh-server")
	if os.Geteuid() == 0 {
		// sshd run by root separates privileges into this directory, which
		// the package's service makes at boot; a fresh install has none.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	hostKey := filepath.Join(dir, "host_key")
	cfg := filepath.Join(dir, "sshd_config")
	s := &sshServer{authorized: filepath.Join(dir, "authorized_keys"), knownHosts: filepath.Join(dir, "known_hosts")}
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(hostKey, string(pem.EncodeToMemory(block)))
	write(s.authorized, "")
	write(cfg, fmt.Sprintf("HostKey %s\nAuthorizedKeysFile %s\nStrictModes no\nPubkeyAuthentication yes\n"+
		"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n"+
		"PidFile none\nLogLevel VERBOSE\n", hostKey, s.authorized))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	pub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	write(s.knownHosts, fmt.Sprintf("[127.0.0.1]:%d %s", s.port, ssh.MarshalAuthorizedKey(pub)))

	var wg sync.WaitGroup
	var mu sync.Mutex
	var running []*exec.Cmd
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				continue
			}
			cmd := exec.Command(sshd, "-i", "-e", "-f", cfg)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, s
			err = cmd.Start()
			f.Close()
			if err != nil {
				fmt.Fprintln(s, "sshd did not start:", err)
				continue
			}
			mu.Lock()
			running = append(running, cmd)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); cmd.Wait() }()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, cmd := range running {
			cmd.Process.Signal(syscall.SIGKILL) // ours; a no-op once it has exited and been waited for
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

func TestAnSSHCloneFromASessionOffersTheKeyOfItsHostOnly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := startSSHD(t)
	me, err := user.Current()
	is.NoErr(err)
	root := t.TempDir()
	_, err = execOutput(tool(t, "git", "git"), "init", "-q", "--bare", filepath.Join(root, "repo.git"))
	is.NoErr(err)
	v, broker := newBroker()
	mine, other := unlockedSSH(t, v, "mine"), unlockedSSH(t, v, "other")
	broker.LendSSH("mine", "other")
	host := fmt.Sprintf("127.0.0.1:%d", srv.port)
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker, Logins: []hub.SessionLogin{
		{Host: host, CredentialID: "mine", Type: hub.CredentialSSH, PublicKey: mine.PublicKey},
		{Host: "other.example", CredentialID: "other", Type: hub.CredentialSSH, PublicKey: other.PublicKey},
	}}, t.TempDir())
	// The session's own ssh command, told where the test server's host
	// key is known (ssh reads known_hosts from the account's home).
	sshCmd := []string{"GIT_SSH_COMMAND=" + l.get("GIT_SSH_COMMAND") + " -o UserKnownHostsFile=" + srv.knownHosts +
		" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes"}
	remote := fmt.Sprintf("ssh://%s@%s/%s", me.Username, host, filepath.Join(root, "repo.git"))

	srv.authorize(t, other.PublicKey)
	_, err = l.run(t, t.TempDir(), sshCmd, "", "git", "ls-remote", remote)
	is.True(err != nil) // the agent holds the other host's key, but ssh never offers it here

	srv.authorize(t, mine.PublicKey)
	dest := filepath.Join(t.TempDir(), "clone")
	out, err := l.run(t, t.TempDir(), sshCmd, "", "git", "clone", "-q", remote, dest)
	is.NoErr(err) // the host's own key gets in
	if err != nil {
		t.Logf("git: %s\nsshd: %s", out, srv)
	}
	_, err = os.Stat(filepath.Join(dest, ".git"))
	is.NoErr(err) // a clone

	broker.Revoke("mine")
	_, err = l.run(t, t.TempDir(), sshCmd, "", "git", "ls-remote", remote)
	is.True(err != nil) // an unassigned key stops logging in at once
}
