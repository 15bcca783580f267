package keyvault_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

// The real clients people use with these keys, run against the vault:
// OpenSSH's ssh-add and ssh-keygen through a session's socket, and
// GnuPG verifying (and making) OpenPGP keys. Without them the tests skip,
// loudly; .ci/run installs gnupg, and the OpenSSH client is part of the
// build machine.

// clientTimeout bounds each run of a real client.
const clientTimeout = 30 * time.Second

// realClient finds a real client on PATH or skips the test, loudly.
func realClient(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("SKIPPED: %s is not installed, so %s cannot run against the vault (apt-get install %s)", name, t.Name(), pkg)
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	return p
}

// runClient runs a client with a minimal environment plus env, in dir,
// and returns its combined output and its error.
func runClient(t *testing.T, dir string, env []string, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C", "LC_ALL=C"}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sshAddFingerprints lists what ssh-add -l sees on sock, sorted.
func sshAddFingerprints(t *testing.T, sshAdd, sock string) ([]string, string) {
	t.Helper()
	out, _ := runClient(t, t.TempDir(), []string{"SSH_AUTH_SOCK=" + sock}, "", sshAdd, "-l")
	var fps []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], "SHA256:") {
			fps = append(fps, f[1])
		}
	}
	slices.Sort(fps)
	return fps, out
}

func TestSSHAddListsExactlyTheOfferedUnlockedKeysAndLosesALockedOneAtOnce(t *testing.T) {
	sshAdd := realClient(t, "ssh-add", "openssh-client")
	is := is.New(t)
	v := newVault(t)
	ag, pubA := lendKey(t, v, "a", 1, hub.AgentOptions{})
	kb, err := v.ImportSSH(seedOpenSSH(t, 2), nil)
	is.NoErr(err)
	is.NoErr(v.Unlock("b", hub.CredentialSSH, kb.Sealed, nil)) // unlocked, not offered
	kc, err := v.GenerateSSH([]byte("pass"), "c")
	is.NoErr(err) // offered, still locked
	ag.Offer([]string{"a", "c"})
	fps, out := sshAddFingerprints(t, sshAdd, ag.Path())
	is.Equal(fps, []string{ssh.FingerprintSHA256(pubA)}) // exactly the offered unlocked key
	is.True(strings.Contains(out, " a (ED25519)"))       // named by its credential
	is.NoErr(v.Unlock("c", hub.CredentialSSH, kc.Sealed, []byte("pass")))
	fps, _ = sshAddFingerprints(t, sshAdd, ag.Path())
	is.Equal(len(fps), 2) // an unlock shows at once
	v.Lock("a")
	v.Lock("c")
	fps, out = sshAddFingerprints(t, sshAdd, ag.Path())
	is.Equal(len(fps), 0)                                          // locks too
	is.True(strings.Contains(out, "The agent has no identities.")) // as ssh-add says it
	is.NoErr(v.Unlock("c", hub.CredentialSSH, kc.Sealed, []byte("pass")))
	_, err = runClient(t, t.TempDir(), []string{"SSH_AUTH_SOCK=" + ag.Path()}, "", sshAdd, "-D")
	is.True(err != nil) // ssh-add cannot remove the Hub's keys
	fps, _ = sshAddFingerprints(t, sshAdd, ag.Path())
	is.Equal(fps, []string{kc.Fingerprint}) // which stay lent
}

var (
	rsaOnce sync.Once
	rsaPEM  []byte
)

// rsaKey returns an RSA 2048 key in PKCS#1, made once.
func rsaKey(t *testing.T) []byte {
	t.Helper()
	rsaOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err == nil {
			rsaPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
		}
	})
	if rsaPEM == nil {
		t.Fatal("no RSA key")
	}
	return rsaPEM
}

func TestSSHKeygenSignsAGitPayloadThroughTheAgentAndVerifiesIt(t *testing.T) {
	sshKeygen := realClient(t, "ssh-keygen", "openssh-client")
	for _, c := range []struct {
		name string
		key  func(t *testing.T) []byte
	}{
		{"Ed25519", func(t *testing.T) []byte { return seedOpenSSH(t, 4) }},
		{"RSA", rsaKey},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			v := newVault(t)
			k, err := v.ImportSSH(c.key(t), nil)
			is.NoErr(err)
			is.NoErr(v.Unlock("s", hub.CredentialSSH, k.Sealed, nil))
			var mu sync.Mutex
			var purposes []hub.CredentialPurpose
			ag, err := v.ServeAgent(hub.AgentOptions{Path: privateSocket(t), OnUse: func(_ context.Context, u hub.CredentialUse) error {
				mu.Lock()
				defer mu.Unlock()
				purposes = append(purposes, u.Purpose)
				return nil
			}})
			is.NoErr(err)
			defer ag.Close()
			ag.Offer([]string{"s"})

			dir := t.TempDir()
			is.NoErr(os.WriteFile(filepath.Join(dir, "key.pub"), []byte(k.PublicKey+"\n"), 0o600))
			is.NoErr(os.WriteFile(filepath.Join(dir, "commit"), []byte("tree 4b825dc6\n\na commit\n"), 0o600))
			is.NoErr(os.WriteFile(filepath.Join(dir, "allowed"), []byte(`dev@example.com namespaces="git" `+k.PublicKey+"\n"), 0o600))
			env := []string{"SSH_AUTH_SOCK=" + ag.Path()}
			out, err := runClient(t, dir, env, "", sshKeygen, "-Y", "sign", "-f", "key.pub", "-n", "git", "commit")
			is.NoErr(err) // ssh-keygen signs with the agent's key
			if err != nil {
				t.Log(out)
			}
			payload, err := os.ReadFile(filepath.Join(dir, "commit"))
			is.NoErr(err)
			out, err = runClient(t, dir, nil, string(payload), sshKeygen, "-Y", "verify", "-f", "allowed", "-I", "dev@example.com", "-n", "git", "-s", "commit.sig")
			is.NoErr(err)                                          // and verifies it against the allowed signers
			is.True(strings.Contains(out, `Good "git" signature`)) // as good
			_, err = runClient(t, dir, nil, "another commit", sshKeygen, "-Y", "verify", "-f", "allowed", "-I", "dev@example.com", "-n", "git", "-s", "commit.sig")
			is.True(err != nil) // for that payload only
			mu.Lock()
			defer mu.Unlock()
			is.True(len(purposes) > 0) // the use was told
			for _, p := range purposes {
				is.Equal(p, hub.PurposeSignature) // as a Git signature
			}
		})
	}
}

// gnupg returns gpg and a fresh, short GNUPGHOME (gpg-agent's socket
// path must fit), whose agent is stopped at the end.
func gnupg(t *testing.T) (gpg, home string) {
	t.Helper()
	gpg = realClient(t, "gpg", "gnupg")
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if gpgconf, err := exec.LookPath("gpgconf"); err == nil {
			runClient(t, home, []string{"GNUPGHOME=" + home}, "", gpgconf, "--kill", "all")
		}
		os.RemoveAll(home)
	})
	return gpg, home
}

func TestGPGVerifiesTheVaultsOpenPGPSignature(t *testing.T) {
	gpg, home := gnupg(t)
	is := is.New(t)
	v := newVault(t)
	k, err := v.GenerateOpenPGP("Wharf Test <test@example.com>", []byte("pgp pass"))
	is.NoErr(err)
	is.NoErr(v.Unlock("o", hub.CredentialOpenPGP, k.Sealed, []byte("pgp pass")))
	data := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example.com> 1700000000 +0000\n\nsigned\n"
	sig, err := v.SignOpenPGP("o", []byte(data))
	is.NoErr(err)
	is.NoErr(os.WriteFile(filepath.Join(home, "pub.asc"), []byte(k.PublicKey), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(home, "data"), []byte(data), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(home, "data.asc"), sig, 0o600))
	env := []string{"GNUPGHOME=" + home}
	out, err := runClient(t, home, env, "", gpg, "--batch", "--import", "pub.asc")
	is.NoErr(err) // gpg imports the exported public key
	if err != nil {
		t.Log(out)
	}
	out, err = runClient(t, home, env, "", gpg, "--batch", "--status-fd", "1", "--verify", "data.asc", "data")
	is.NoErr(err)                                                          // and verifies the signature
	is.True(strings.Contains(out, "[GNUPG:] GOODSIG "))                    // as good
	is.True(strings.Contains(out, "[GNUPG:] VALIDSIG "+k.Fingerprint+" ")) // by the key
	is.NoErr(os.WriteFile(filepath.Join(home, "data"), []byte(data+"x"), 0o600))
	out, err = runClient(t, home, env, "", gpg, "--batch", "--status-fd", "1", "--verify", "data.asc", "data")
	is.True(err != nil && strings.Contains(out, "[GNUPG:] BADSIG ")) // of that data only
}

func TestAKeyGPGMadeImportsUnlocksAndSignsForGPG(t *testing.T) {
	gpg, home := gnupg(t)
	is := is.New(t)
	env := []string{"GNUPGHOME=" + home}
	loopback := []string{"--batch", "--pinentry-mode", "loopback", "--passphrase", "gpg pass"}
	out, err := runClient(t, home, env, "", gpg, append(loopback, "--quick-gen-key", "Made By Gpg <gpg@example.com>", "ed25519", "sign", "never")...)
	is.NoErr(err) // gpg makes a key
	if err != nil {
		t.Log(out)
	}
	armored, err := runClient(t, home, env, "", gpg, append(loopback, "--armor", "--export-secret-keys", "gpg@example.com")...)
	is.NoErr(err) // and exports it, protected
	v := newVault(t)
	k, err := v.ImportOpenPGP([]byte(armored))
	is.NoErr(err)                                                                                      // the vault imports it
	is.True(k.Protected)                                                                               // keeping its protection
	is.Equal(hub.KindOf(v.Unlock("g", hub.CredentialOpenPGP, k.Sealed, []byte("wrong"))), hub.Invalid) // a wrong passphrase
	is.NoErr(v.Unlock("g", hub.CredentialOpenPGP, k.Sealed, []byte("gpg pass")))                       // the right one
	sig, err := v.SignOpenPGP("g", []byte("payload\n"))
	is.NoErr(err)
	is.NoErr(os.WriteFile(filepath.Join(home, "p"), []byte("payload\n"), 0o600))
	is.NoErr(os.WriteFile(filepath.Join(home, "p.asc"), sig, 0o600))
	out, err = runClient(t, home, env, "", gpg, "--batch", "--status-fd", "1", "--verify", "p.asc", "p")
	is.NoErr(err)                                                          // gpg verifies the vault's signature
	is.True(strings.Contains(out, "[GNUPG:] VALIDSIG "+k.Fingerprint+" ")) // by its own key
}
