package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"
)

// The remote machine: OpenSSH's sshd on a loopback port with a host key
// and a client key of the run's, its sessions' HOME a folder of the run's.

type sshd struct {
	cmd    *exec.Cmd
	config string // the client's ssh_config
	alias  string // its Host entry
	home   string // the sessions' HOME
	port   int
}

func keygen(path string) error {
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ssh-keygen: %v: %s", err, out)
	}
	return nil
}

// startSSHD runs sshd in dir until ctx ends or stop.
func startSSHD(ctx context.Context, dir string) (*sshd, error) {
	bin, err := exec.LookPath("sshd")
	if err != nil {
		bin = "/usr/sbin/sshd"
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("no sshd: install openssh-server")
		}
	}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, err
		}
	}
	s := &sshd{home: filepath.Join(dir, "rh"), alias: "wharf-bench-host", config: filepath.Join(dir, "ssh_config")}
	if err := os.MkdirAll(s.home, 0o755); err != nil {
		return nil, err
	}
	hostKey, clientKey := filepath.Join(dir, "host_key"), filepath.Join(dir, "id")
	for _, k := range []string{hostKey, clientKey} {
		if err := keygen(k); err != nil {
			return nil, err
		}
	}
	pub, err := os.ReadFile(clientKey + ".pub")
	if err != nil {
		return nil, err
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.port = port
	u, err := user.Current()
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"authorized_keys": string(pub),
		"known_hosts":     fmt.Sprintf("[127.0.0.1]:%d %s", port, hostPub),
		"sshd_config": fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\nStrictModes no\n"+
			"PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"+
			"PermitRootLogin prohibit-password\nPidFile none\nAllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n"+
			"SetEnv HOME=%s\n", port, hostKey, filepath.Join(dir, "authorized_keys"), s.home),
		"ssh_config": fmt.Sprintf("Host %s\n  HostName 127.0.0.1\n  Port %d\n  User %s\n  IdentityFile %s\n  IdentitiesOnly yes\n"+
			"  IdentityAgent none\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n",
			s.alias, port, u.Username, clientKey, filepath.Join(dir, "known_hosts")),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return nil, err
		}
	}
	s.cmd = exec.CommandContext(ctx, bin, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	// Ready once it accepts a connection.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("sshd did not listen: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *sshd) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// roundTrips times n runs of `ssh alias true` over a ControlMaster of
// the run's (made by the first, not timed).
func (s *sshd) roundTrips(ctx context.Context, dir string, n int) ([]time.Duration, error) {
	args := []string{"-F", s.config, "-o", "ControlMaster=auto", "-o", "ControlPath=" + filepath.Join(dir, "bm"),
		"-o", "ControlPersist=60", "-o", "BatchMode=yes", s.alias, "true"}
	if out, err := exec.CommandContext(ctx, "ssh", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ssh: %v: %s", err, strings.TrimSpace(string(out)))
	}
	defer exec.Command("ssh", "-F", s.config, "-o", "ControlPath="+filepath.Join(dir, "bm"), "-O", "exit", s.alias).Run()
	var out []time.Duration
	for range n {
		t0 := time.Now()
		if err := exec.CommandContext(ctx, "ssh", args...).Run(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// connections counts the TCP connections sshd has accepted and that are
// still established: its entries in /proc/net/tcp whose local port is
// its own (the clients' ends have other local ports). -1 when unknown.
func (s *sshd) connections() int {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	local := fmt.Sprintf(":%04X ", s.port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[1]+" ", local) && f[3] == "01" {
			n++
		}
	}
	return n
}
