package local_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// sshAddList is what ssh-add -l lists in the session's environment: the
// fingerprints, sorted, and its whole output.
func sshAddList(t *testing.T, l *lent) ([]string, string) {
	t.Helper()
	out, _ := l.run(t, t.TempDir(), nil, "", tool(t, "ssh-add", "openssh-client"), "-l")
	var fps []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], "SHA256:") {
			fps = append(fps, f[1])
		}
	}
	slices.Sort(fps)
	return fps, out
}

func TestSSHAddInASessionListsExactlyItsKeysAndLosesARevokedOrLockedOneAtOnce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	v, broker := newBroker()
	ka, kb := unlockedSSH(t, v, "a"), unlockedSSH(t, v, "b")
	unlockedSSH(t, v, "elsewhere") // unlocked, lent to another session
	broker.LendSSH("a", "b")
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker, Logins: []hub.SessionLogin{
		{Host: "a.example", CredentialID: "a", Type: hub.CredentialSSH, PublicKey: ka.PublicKey},
		{Host: "b.example", CredentialID: "b", Type: hub.CredentialSSH, PublicKey: kb.PublicKey},
	}}, t.TempDir())
	fps, out := sshAddList(t, l)
	want := []string{ka.Fingerprint, kb.Fingerprint}
	slices.Sort(want)
	is.Equal(fps, want) // exactly the session's keys
	if t.Failed() {
		t.Log(out)
	}
	broker.Revoke("a")
	fps, _ = sshAddList(t, l)
	is.Equal(fps, []string{kb.Fingerprint}) // an unassigned key is gone at once
	v.Lock("b")
	fps, out = sshAddList(t, l)
	is.Equal(len(fps), 0)                                          // and a locked one
	is.True(strings.Contains(out, "The agent has no identities.")) // as ssh-add says it
}

// initRepo makes a repository in the session's environment.
func initRepo(t *testing.T, l *lent) string {
	t.Helper()
	repo := t.TempDir()
	if out, err := l.run(t, repo, nil, "", "git", "init", "-q"); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return repo
}

func TestAnSSHSignedCommitFromASessionVerifies(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	v, broker := newBroker()
	k := unlockedSSH(t, v, "s")
	broker.LendSSH("s")
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
		Signing: &hub.SessionSigning{CredentialID: "s", Type: hub.CredentialSSH, PublicKey: k.PublicKey, Fingerprint: k.Fingerprint}}, userHome(t))
	repo := initRepo(t, l)
	out, err := l.run(t, repo, nil, "", "git", "commit", "-q", "--allow-empty", "-m", "signed by the Hub's key")
	is.NoErr(err) // signed (commit.gpgsign is the projection's) through the session's agent
	if err != nil {
		t.Log(out)
	}
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	is.NoErr(os.WriteFile(allowed, []byte("ann@example.com "+k.PublicKey+"\n"), 0o600))
	out, err = l.run(t, repo, nil, "", "git", "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", "HEAD")
	is.NoErr(err)                                                              // git verifies it
	is.True(strings.Contains(out, `Good "git" signature for ann@example.com`)) // as the Hub's key's
	is.True(slices.ContainsFunc(broker.Uses(), func(u hub.CredentialUse) bool {
		return u.CredentialID == "s" && u.Purpose == hub.PurposeSignature
	})) // the use was seen, as a signature

	broker.Revoke("s")
	_, err = l.run(t, repo, nil, "", "git", "commit", "-q", "--allow-empty", "-m", "after the revocation")
	is.True(err != nil) // no signature once the key is taken away
}

func TestAnOpenPGPSignedCommitFromASessionVerifiesWithWharfAndWithGnuPG(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	gpg := tool(t, "gpg", "gnupg")
	v, broker := newBroker()
	k := unlockedOpenPGP(t, v, "p")
	broker.LendSigning("p")
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
		Signing: &hub.SessionSigning{CredentialID: "p", Type: hub.CredentialOpenPGP, PublicKey: k.PublicKey, Fingerprint: k.Fingerprint}}, userHome(t))
	repo := initRepo(t, l)
	out, err := l.run(t, repo, nil, "", "git", "commit", "-q", "--allow-empty", "-S", "-m", "signed by the Hub's key")
	is.NoErr(err) // signed through wharf gpg and the credential socket
	if err != nil {
		t.Log(out)
	}
	out, err = l.run(t, repo, nil, "", "git", "verify-commit", "--raw", "HEAD")
	is.NoErr(err)                                                      // wharf gpg verifies it
	is.True(strings.Contains(out, "[GNUPG:] GOODSIG "))                // as good
	is.True(strings.Contains(out, "[GNUPG:] VALIDSIG "+k.Fingerprint)) // by the session's key
	out, err = l.run(t, repo, nil, "", "git", "log", "-1", "--format=%G? %GF")
	is.NoErr(err)
	is.Equal(strings.TrimSpace(out), "G "+k.Fingerprint) // and git's log shows it good

	home, err := os.MkdirTemp("", "gpg") // short: gpg-agent's socket must fit
	is.NoErr(err)
	t.Cleanup(func() {
		if gpgconf, err := exec.LookPath("gpgconf"); err == nil {
			exec.Command(gpgconf, "--homedir", home, "--kill", "all").Run()
		}
		os.RemoveAll(home)
	})
	gnupg := []string{"GNUPGHOME=" + home}
	out, err = l.run(t, repo, gnupg, k.PublicKey, gpg, "--batch", "--import")
	is.NoErr(err) // GnuPG imports the exported public key
	if err != nil {
		t.Log(out)
	}
	out, err = l.run(t, repo, gnupg, "", "git", "-c", "gpg.program="+gpg, "verify-commit", "HEAD")
	is.NoErr(err)                                         // and verifies the commit
	is.True(strings.Contains(out, "Good signature from")) // as good
	is.True(slices.ContainsFunc(broker.Uses(), func(u hub.CredentialUse) bool {
		return u.CredentialID == "p" && u.Purpose == hub.PurposeSignature
	})) // the use was seen

	broker.Revoke("p")
	out, err = l.run(t, repo, nil, "", "git", "commit", "-q", "--allow-empty", "-S", "-m", "after the revocation")
	is.True(err != nil)                                  // no signature once the key is taken away
	is.True(strings.Contains(out, "gpg failed to sign")) // as git reports a signing program's refusal
}
