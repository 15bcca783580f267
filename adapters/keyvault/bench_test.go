package keyvault_test

import (
	"bufio"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/wharfhub/wharf/adapters/keyvault"
	"github.com/wharfhub/wharf/hub"
)

// The agent's speed against OpenSSH's own, with the same ed25519 key and
// the same Go client on a Unix socket, and what an unlock costs before
// the first signature. Run: go test ./adapters/keyvault -run '^$' -bench .

// benchData is what a login asks an agent to sign: about a session id
// and a userauth request.
var benchData = make([]byte, 160)

func benchVault(b *testing.B) *keyvault.Vault {
	b.Helper()
	v, err := keyvault.New(keyvault.Options{KeyFile: filepath.Join(b.TempDir(), "hub.key")})
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func benchSocketDir(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp("", "kvb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func benchClient(b *testing.B, sock string) agent.ExtendedAgent {
	b.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return agent.NewClient(c)
}

func benchSigns(b *testing.B, cl agent.ExtendedAgent, pub ssh.PublicKey) {
	b.Helper()
	for b.Loop() {
		if _, err := cl.Sign(pub, benchData); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sigs/s")
}

func BenchmarkSignThroughASessionSocket(b *testing.B) {
	v := benchVault(b)
	block, _ := ssh.MarshalPrivateKey(seedKey(7), "")
	k, err := v.ImportSSH(pemBytes(block), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := v.Unlock("k", hub.CredentialSSH, k.Sealed, nil); err != nil {
		b.Fatal(err)
	}
	ag, err := v.ServeAgent(hub.AgentOptions{Path: filepath.Join(benchSocketDir(b), "agent.sock")})
	if err != nil {
		b.Fatal(err)
	}
	defer ag.Close()
	ag.Offer([]string{"k"})
	pub, _ := ssh.NewPublicKey(seedKey(7).Public())
	benchSigns(b, benchClient(b, ag.Path()), pub)
}

func BenchmarkSignThroughOpenSSHsAgent(b *testing.B) {
	sshAgent, err1 := exec.LookPath("ssh-agent")
	sshAdd, err2 := exec.LookPath("ssh-add")
	if err1 != nil || err2 != nil {
		msg := "SKIPPED: ssh-agent or ssh-add is not installed, so there is nothing to compare with (apt-get install openssh-client)"
		fmt.Fprintln(os.Stderr, msg)
		b.Skip(msg)
	}
	dir := benchSocketDir(b)
	sock := filepath.Join(dir, "agent.sock")
	cmd := exec.Command(sshAgent, "-D", "-a", sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ready := make(chan error, 1)
	go func() { _, err := bufio.NewReader(out).ReadString('\n'); ready <- err }() // its first line comes once it listens
	select {
	case err := <-ready:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		b.Fatal("ssh-agent never started")
	}
	block, _ := ssh.MarshalPrivateKey(seedKey(7), "")
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, pemBytes(block), 0o600); err != nil {
		b.Fatal(err)
	}
	add := exec.Command(sshAdd, keyFile)
	add.Env = []string{"SSH_AUTH_SOCK=" + sock, "PATH=" + os.Getenv("PATH")}
	if msg, err := add.CombinedOutput(); err != nil {
		b.Fatalf("ssh-add: %v: %s", err, msg)
	}
	pub, _ := ssh.NewPublicKey(seedKey(7).Public())
	benchSigns(b, benchClient(b, sock), pub)
}

func BenchmarkUnlockToFirstSignature(b *testing.B) {
	for _, protected := range []bool{true, false} {
		b.Run(map[bool]string{true: "Protected", false: "SealedByTheHub"}[protected], func(b *testing.B) {
			v := benchVault(b)
			var k hub.NewKey
			var pass []byte
			var err error
			if protected {
				pass = []byte("a passphrase")
				k, err = v.GenerateSSH(pass, "bench")
			} else {
				block, _ := ssh.MarshalPrivateKey(seedKey(8), "")
				k, err = v.ImportSSH(pemBytes(block), nil)
			}
			if err != nil {
				b.Fatal(err)
			}
			pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicKey))
			if err != nil {
				b.Fatal(err)
			}
			ag, err := v.ServeAgent(hub.AgentOptions{Path: filepath.Join(benchSocketDir(b), "agent.sock")})
			if err != nil {
				b.Fatal(err)
			}
			defer ag.Close()
			ag.Offer([]string{"u"})
			cl := benchClient(b, ag.Path())
			for b.Loop() {
				if err := v.Unlock("u", hub.CredentialSSH, k.Sealed, pass); err != nil {
					b.Fatal(err)
				}
				if _, err := cl.Sign(pub, benchData); err != nil {
					b.Fatal(err)
				}
				v.Lock("u")
			}
		})
	}
}

func pemBytes(b *pem.Block) []byte { return pem.EncodeToMemory(b) }
