// Package sshdtest serves SSH to tests as a Git host or a remote
// workspace host does: OpenSSH's sshd on a loopback port, started without
// privileges of its own. The test process accepts each connection and
// hands it to a new `sshd -i` (inetd mode) with a throwaway host key and
// an authorized_keys file the test writes, so a test can prove which key
// logged in, and that a host key is confirmed before anything is sent.
//
// Each connection's sshd leads its own process group (the sessions it
// starts lead their own), so Signal can stop, continue or kill the
// connections — a partition, its healing, a crash of the host's sshd —
// without touching the programs they run. Unix-socket forwarding is on
// (with StreamLocalBindUnlink, so a socket forwarded to the server
// replaces a stale one), and variables named WHARF_TEST_* are accepted
// from clients that send them (SendEnv), and GORACE: a test can pass a
// child built with the race detector the options it runs with.
package sshdtest

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

	"golang.org/x/crypto/ssh"
)

// Server is a loopback sshd.
type Server struct {
	// Port is the loopback port it listens on.
	Port int
	// HostKey is its host key's public half.
	HostKey ssh.PublicKey
	// KnownHosts is a known_hosts file naming HostKey for the server.
	KnownHosts string

	authorized string // the authorized_keys file
	hostKey    string // the host key file
	mu         sync.Mutex
	log        strings.Builder

	connMu  sync.Mutex
	running map[*exec.Cmd]bool // connections' sshd, until waited for
}

// Host is the server's host as ssh URLs and known_hosts name it.
func (s *Server) Host() string { return fmt.Sprintf("127.0.0.1:%d", s.Port) }

// Write collects sshd's log.
func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

// String is sshd's log so far, for a failing test to show.
func (s *Server) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

// Authorize makes the server accept exactly the key lines given (one, or
// several joined by line breaks), for the user the test runs as.
func (s *Server) Authorize(t testing.TB, line string) {
	t.Helper()
	if err := os.WriteFile(s.authorized, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Find returns the path of an installed program, looking in the sbin
// folders too (sshd is there), or skips the test naming the Debian
// package that has it.
func Find(t testing.TB, name, pkg string) string {
	t.Helper()
	if p, ok := Lookup(name); ok {
		return p
	}
	msg := fmt.Sprintf("SKIPPED: %s is not installed, so %s cannot run (apt-get install %s; .ci/run does)", name, t.Name(), pkg)
	fmt.Fprintln(os.Stderr, msg)
	t.Skip(msg)
	return ""
}

// Lookup returns the path of an installed program, looking in the sbin
// folders too, and whether there is one.
func Lookup(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// Start starts a server that accepts no key until Authorize; the test's
// cleanup stops it and every sshd it started. Its sessions get a fresh,
// empty HOME of the test's, as a new account has: the account's own
// start-up files never run (Debian's bash reads ~/.bashrc for every
// command over ssh, and a developer's may take seconds), and nothing a
// remote command keeps under its home lands in the user's.
func Start(t testing.TB) *Server { return StartHome(t, t.TempDir()) }

// StartHome is Start of a server whose sessions get home as their HOME
// (sshd's SetEnv), so what a remote command keeps under its home lands
// in a test's folder instead of the user's; "" keeps the account's.
func StartHome(t testing.TB, home string) *Server {
	t.Helper()
	sshd := Find(t, "sshd", "openssh-server")
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
	s := &Server{authorized: filepath.Join(dir, "authorized_keys"), KnownHosts: filepath.Join(dir, "known_hosts"),
		hostKey: hostKey, running: map[*exec.Cmd]bool{}}
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(hostKey, string(pem.EncodeToMemory(block)))
	write(s.authorized, "")
	write(cfg, fmt.Sprintf("HostKey %s\nAuthorizedKeysFile %s\nStrictModes no\nPubkeyAuthentication yes\n"+
		"PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n"+
		"PidFile none\nLogLevel VERBOSE\nAllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n"+
		"AcceptEnv WHARF_TEST_* GORACE\n", hostKey, s.authorized)+setEnvHome(home))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	if s.HostKey, err = ssh.NewPublicKey(priv.Public()); err != nil {
		t.Fatal(err)
	}
	write(s.KnownHosts, fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, ssh.MarshalAuthorizedKey(s.HostKey)))

	var wg sync.WaitGroup
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
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			s.connMu.Lock()
			err = cmd.Start()
			if err == nil {
				s.running[cmd] = true
			}
			s.connMu.Unlock()
			f.Close()
			if err != nil {
				fmt.Fprintln(s, "sshd did not start:", err)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd.Wait()
				s.connMu.Lock()
				delete(s.running, cmd)
				s.connMu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		s.Signal(syscall.SIGCONT) // a stopped sshd ignores the kill until continued
		s.Signal(syscall.SIGKILL)
		wg.Wait()
	})
	return s
}

// Signal sends sig to the process group of every connection's sshd still
// running (not to the sessions they started, which lead groups of their
// own) and returns how many it signalled: SIGSTOP cuts every connection
// off as a partition does, SIGCONT heals it, SIGKILL is a crash.
func (s *Server) Signal(sig syscall.Signal) int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	n := 0
	for cmd := range s.running {
		// Ours until waited for, which removes it from running first.
		if err := syscall.Kill(-cmd.Process.Pid, sig); err == nil {
			n++
		}
	}
	return n
}

// Connections counts the connections whose sshd still runs.
func (s *Server) Connections() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return len(s.running)
}

// RotateHostKey gives the server a new host key: connections made after
// it present the new key, which KnownHosts does not name (a changed host
// key, as a reinstalled or impersonated host shows).
func (s *Server) RotateHostKey(t testing.TB) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.hostKey, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Client is what an OpenSSH client needs to log in to the server: an
// ssh_config file with one Host entry, Alias, naming the server, a key
// the server accepts, and KnownHosts as its only known hosts file.
type Client struct {
	Config string // give ssh -F Config
	Alias  string // the Host entry: give ssh Alias as the destination
	User   string // the user it logs in as: the test's
	// AuthorizedKey is its key's authorized_keys line, for a test that
	// authorizes another key beside it.
	AuthorizedKey string
}

// NewClient makes a client key, makes the server accept it (replacing
// what Authorize set), and writes a client configuration in dir (kept
// short: sockets may be made beside it) that uses it and no agent, with
// known hosts knownHosts (s.KnownHosts when "").
func (s *Server) NewClient(t testing.TB, dir, knownHosts string) Client {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))
	s.Authorize(t, line)
	if knownHosts == "" {
		knownHosts = s.KnownHosts
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	c := Client{Config: filepath.Join(dir, "ssh_config"), Alias: "wharf-test-host", User: u.Username, AuthorizedKey: line}
	text := fmt.Sprintf("Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n"+
		"  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n"+
		"  SendEnv WHARF_TEST_* GORACE\n  LogLevel ERROR\n", c.Alias, s.Port, u.Username, key, knownHosts)
	if err := os.WriteFile(c.Config, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// setEnvHome is the sshd_config line that sets sessions' HOME; "" for none.
func setEnvHome(home string) string {
	if home == "" {
		return ""
	}
	return "SetEnv HOME=" + home + "\n"
}
