package local_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// BenchmarkProjection measures what a credential projection adds to a
// session's start: the folder, the user's git config read by git, an
// agent, the credential socket and the generated files, then their end.
func BenchmarkProjection(b *testing.B) {
	v, broker := newBroker()
	k, err := v.GenerateSSH([]byte("pass"), "a")
	if err != nil {
		b.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	be, err := local.New(local.Options{RuntimeDir: filepath.Join(dir, "run")})
	if err != nil {
		b.Fatal(err)
	}
	spec := hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir, Credentials: hub.SessionCredentials{
		Tools: map[hub.CredentialToolName]string{hub.ToolGit: lookTool(b, "git"), hub.ToolSSH: lookTool(b, "ssh")}, Broker: broker,
		Logins: []hub.SessionLogin{{Host: "git.example", CredentialID: "a", Type: hub.CredentialSSH, PublicKey: k.PublicKey}}}}
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	b.ResetTimer()
	for b.Loop() {
		_, done, err := be.Project(context.Background(), spec, base)
		if err != nil {
			b.Fatal(err)
		}
		done()
	}
}

// BenchmarkGitCredentialRoundTrip measures one answer of the credential
// socket to wharf git-credential, in process: the socket, the broker
// and the vault opening the token.
func BenchmarkGitCredentialRoundTrip(b *testing.B) {
	v, broker := newBroker()
	sealed, err := v.SealToken([]byte("tok"))
	if err != nil {
		b.Fatal(err)
	}
	broker.LendToken("git.example", fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	dir, err := os.MkdirTemp("", "wb")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	be, err := local.New(local.Options{RuntimeDir: filepath.Join(dir, "run")})
	if err != nil {
		b.Fatal(err)
	}
	env, done, err := be.Project(context.Background(), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: dir,
		Credentials: hub.SessionCredentials{Broker: broker, Logins: []hub.SessionLogin{{Host: "git.example", CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}}}},
		[]string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		b.Fatal(err)
	}
	defer done()
	getenv := func(name string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
	var out strings.Builder
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if err := local.RunGitCredential(context.Background(), []string{"get"}, strings.NewReader("protocol=https\nhost=git.example\n\n"), &out, &out, getenv); err != nil || !strings.Contains(out.String(), "password=tok") {
			b.Fatal(err, out.String())
		}
	}
}

func lookTool(b *testing.B, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		b.Skip(name, "is not installed")
	}
	return p
}
