// Package sshdtest serves SSH to tests as a Git host does: OpenSSH's
// sshd on a loopback port, started without privileges of its own. The
// test process accepts each connection and hands it to a new `sshd -i`
// (inetd mode) with a throwaway host key and an authorized_keys file the
// test writes, so a test can prove which key logged in, and that a
// host key is confirmed before anything is sent.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
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
	mu         sync.Mutex
	log        strings.Builder
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

// Authorize makes the server accept exactly the key line given, for the
// user the test runs as.
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
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	msg := fmt.Sprintf("SKIPPED: %s is not installed, so %s cannot run (apt-get install %s; .ci/run does)", name, t.Name(), pkg)
	fmt.Fprintln(os.Stderr, msg)
	t.Skip(msg)
	return ""
}

// Start starts a server that accepts no key until Authorize; the test's
// cleanup stops it and every sshd it started.
func Start(t testing.TB) *Server {
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
	s := &Server{authorized: filepath.Join(dir, "authorized_keys"), KnownHosts: filepath.Join(dir, "known_hosts")}
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
	s.Port = l.Addr().(*net.TCPAddr).Port
	if s.HostKey, err = ssh.NewPublicKey(priv.Public()); err != nil {
		t.Fatal(err)
	}
	write(s.KnownHosts, fmt.Sprintf("[127.0.0.1]:%d %s", s.Port, ssh.MarshalAuthorizedKey(s.HostKey)))

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
