package local_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// The projection's tests start report-env children lent credentials by a
// fake broker over the fake vault (which makes real keys and serves real
// agent sockets), then run the real clients — git, ssh, ssh-add, gpg —
// in the environment the child reported: the session's own.

var brokerEpoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// tool finds a real client on PATH (or in the sbin folders, where sshd
// lives) or skips the test, loudly: .ci/run installs every one of them.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	return sshdtest.Find(t, name, pkg)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// gitTools are the tools a session's git needs, found on PATH.
func gitTools(t *testing.T) map[hub.CredentialToolName]string {
	return map[hub.CredentialToolName]string{
		hub.ToolGit:       tool(t, "git", "git"),
		hub.ToolSSH:       tool(t, "ssh", "openssh-client"),
		hub.ToolSSHKeygen: tool(t, "ssh-keygen", "openssh-client"),
	}
}

// shortDir is a private temporary folder with a short path, so that the
// sockets of a runtime folder inside it fit sun_path whatever the test's
// name.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// lent is a started session lent credentials, with the environment its
// child reported.
type lent struct {
	b    *local.Backend
	rs   hub.WorkspaceSession
	logs *logBuffer
	env  []string
	dir  string // the session's runtime folder
}

// get returns the last value of name in the session's environment.
func (l *lent) get(name string) string {
	v := ""
	for _, kv := range l.env {
		if s, ok := strings.CutPrefix(kv, name+"="); ok {
			v = s
		}
	}
	return v
}

// has reports whether the session's environment sets name.
func (l *lent) has(name string) bool {
	for _, kv := range l.env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}

// startLent starts a session of workspace "alpha" lent c, its base
// environment PATH and HOME=home plus extra.
func startLent(t *testing.T, c hub.SessionCredentials, home string, extra ...string) *lent {
	t.Helper()
	out := filepath.Join(t.TempDir(), "env")
	base := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, extra...)
	b, logs := newBackend(t, modeReportEnv, local.Options{Env: base, RuntimeDir: filepath.Join(shortDir(t), "run")}, outEnv+"="+out)
	rs, err := b.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir(), Credentials: c})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, logs)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		rs.Stop(ctx)
	})
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return &lent{b: b, rs: rs, logs: logs, env: strings.Split(string(data), "\n"), dir: b.ProjectionDirOf("alpha")}
}

// run runs a real client in the session's environment plus extra, in
// dir, bounded in time, and returns its combined output. A name without a
// slash is looked up on the session's PATH, as a shell in it would.
func (l *lent) run(t *testing.T, dir string, extra []string, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if !strings.Contains(name, "/") {
		name = l.lookPath(t, name)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, l.env...), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// lookPath finds name on the session's PATH.
func (l *lent) lookPath(t *testing.T, name string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(l.get("PATH")) {
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p
		}
	}
	t.Fatalf("%s is not on the session's PATH", name)
	return ""
}

// newBroker returns a fake broker over a fresh fake vault.
func newBroker() (*fakes.KeyVault, *fakes.SessionBroker) {
	v := fakes.NewKeyVault(fakes.NewClock(brokerEpoch))
	return v, fakes.NewSessionBroker(v, fakes.NewClock(brokerEpoch))
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

// unlockedOpenPGP makes an OpenPGP key in v, unlocked as credential id.
func unlockedOpenPGP(t *testing.T, v *fakes.KeyVault, id string) hub.NewKey {
	t.Helper()
	k, err := v.GenerateOpenPGP("Ann Example <ann@example.com>", []byte("pass"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Unlock(id, hub.CredentialOpenPGP, k.Sealed, []byte("pass")); err != nil {
		t.Fatal(err)
	}
	return k
}

// userHome makes a home folder whose git config holds the user's
// identity and habits, and credentials a session must never get.
func userHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("habits", "[alias]\n\tst = status --short\n[credential]\n\thelper = store --file ~/creds\n")
	write(".gitconfig", `[user]
	name = Ann Example
	email = ann@example.com
	signingkey = ~/.ssh/id_ed25519.pub
[include]
	path = habits
[core]
	excludesfile = ~/.gitignore_global
	sshCommand = ssh -i ~/.ssh/secret_key
[http]
	extraHeader = Authorization: Bearer ambient-header-token
[url "https://ann:ambient-url-token@git.example/"]
	insteadOf = https://git.example/
[commit]
	gpgsign = true
[gpg]
	program = /usr/bin/gpg
[init]
	defaultBranch = main
`)
	return home
}

// execOutput runs a program with the test's own environment, bounded in
// time, and returns its stdout.
func execOutput(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	return string(out), err
}

// pidOf is the pid of the session's child.
func pidOf(l *lent) int { return local.Pid(l.rs) }
