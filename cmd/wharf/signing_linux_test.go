package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// TestASessionSignsCommitsWithTheHubsKeysAndLosesThemAtOnce runs the
// whole path a person takes, through the real `wharf serve` and its real
// `wharf session` child: generate an SSH key and an OpenPGP key in the
// Hub, unlock them, make each in turn the workspace's signing key, start
// the workspace, and commit with git in the session's own environment
// (read from the child, as its shells and agents get it). Each commit
// verifies with the key's public half outside the session; once the key
// is locked, the next signature fails without a restart.
func TestASessionSignsCommitsWithTheHubsKeysAndLosesThemAtOnce(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"git", "ssh-keygen", "gpg"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", tool)
		}
	}
	is := is.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "wsign") // short: the sessions' sockets live below it
	is.NoErr(err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	repo := filepath.Join(tmp, "src", "signed")
	is.NoErr(os.MkdirAll(repo, 0o755))
	d, err := daemontest.Start(ctx, daemontest.Options{Binary: daemontest.Build(t), StateDir: filepath.Join(tmp, "state")})
	is.NoErr(err) // the daemon serves
	t.Cleanup(func() { d.Kill(); d.AwaitChildren() })
	pw, err := d.FirstUserPassword()
	is.NoErr(err)
	c, _, err := daemontest.Login(ctx, daemontest.NewHTTPClient(nil), d.URL(), daemontest.FirstUser, pw)
	is.NoErr(err) // logged in
	post := func(path string, body any, out any) {
		t.Helper()
		status, raw, err := c.Do(ctx, "POST", path, body, out)
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s: %d %s %v", path, status, raw, err)
		}
	}
	var ws struct{ ID string }
	post("api/hub/workspaces", map[string]any{"path": repo, "init": true, "start": false}, &ws)
	git(t, nil, repo, "config", "user.name", "Ann Example")
	git(t, nil, repo, "config", "user.email", "ann@example.com")

	type credential struct {
		Credential struct {
			ID       string
			Metadata struct{ PublicKey string }
		}
	}
	var sshKey, pgpKey credential
	post("api/hub/credentials/ssh/generate", map[string]any{"name": "signing", "capabilities": []string{"ssh-signing"}, "passphrase": "ssh pass phrase"}, &sshKey)
	post("api/hub/credentials/"+sshKey.Credential.ID+"/unlock", map[string]string{"passphrase": "ssh pass phrase"}, nil)
	post("api/hub/credentials/openpgp/generate", map[string]any{"name": "pgp", "userId": "Ann Example <ann@example.com>", "passphrase": "pgp pass phrase"}, &pgpKey)
	post("api/hub/credentials/"+pgpKey.Credential.ID+"/unlock", map[string]string{"passphrase": "pgp pass phrase"}, nil)

	// SSH: the session's agent signs, ssh-keygen verifies with the public key.
	post("api/hub/workspaces/"+ws.ID+"/credential-assignments", map[string]any{"signing": map[string]string{"credentialId": sshKey.Credential.ID}}, nil)
	post("api/hub/sessions/"+ws.ID+"/start", nil, nil)
	env := sessionEnv(t, d.Pid(), ws.ID)
	git(t, env, repo, "commit", "--allow-empty", "-m", "signed over SSH")
	signers := filepath.Join(tmp, "allowed_signers")
	is.NoErr(os.WriteFile(signers, []byte("ann@example.com "+sshKey.Credential.Metadata.PublicKey+"\n"), 0o600))
	git(t, nil, repo, "-c", "gpg.ssh.allowedSignersFile="+signers, "verify-commit", "HEAD") // verifies outside the session

	// The session's document feed says so: the commit log marks it verified.
	subs := url.QueryEscape(`[{"topic":"document"}]`)
	resp, err := c.Request(ctx, "GET", "api/hub/live?ws="+ws.ID+"&subs="+subs, nil)
	is.NoErr(err) // the stream opens
	defer resp.Body.Close()
	_, err = daemontest.ReadSSE(resp.Body).Until(ctx, liveEvent("document", "data", `"signature":{"status":"verified"}`))
	is.NoErr(err) // the newest commit shows as verified
	post("api/hub/credentials/"+sshKey.Credential.ID+"/lock", map[string]any{}, nil)
	_, err = runGit(env, repo, "commit", "--allow-empty", "-m", "after the lock")
	is.True(err != nil) // a locked key signs nothing, at once

	// OpenPGP: wharf gpg signs through the Hub, gpg verifies with the exported key.
	post("api/hub/workspaces/"+ws.ID+"/credential-assignments", map[string]any{"signing": map[string]string{"credentialId": pgpKey.Credential.ID}}, nil)
	post("api/hub/sessions/"+ws.ID+"/stop", nil, nil)
	post("api/hub/sessions/"+ws.ID+"/start", nil, nil)
	env = sessionEnv(t, d.Pid(), ws.ID)
	git(t, env, repo, "commit", "--allow-empty", "-m", "signed with OpenPGP")
	home := filepath.Join(tmp, "gnupg")
	is.NoErr(os.Mkdir(home, 0o700))
	gpgEnv := append(os.Environ(), "GNUPGHOME="+home)
	imp := exec.Command("gpg", "--batch", "--import")
	imp.Env, imp.Stdin = gpgEnv, strings.NewReader(pgpKey.Credential.Metadata.PublicKey)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("gpg --import: %v\n%s", err, out) // the exported public key imports
	}
	git(t, gpgEnv, repo, "verify-commit", "HEAD") // and the commit verifies with it
}

// sessionEnv reads the environment of workspace id's session child of
// the daemon parent: what its shells and agents get.
func sessionEnv(t *testing.T, parent int, id string) []string {
	t.Helper()
	pids := workspaceSessionChildren(t, parent, id)
	if len(pids) != 1 {
		t.Fatalf("%d session children of %s", len(pids), id)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// git runs git in dir with env (nil: the test's own), failing the test
// when it fails.
func git(t *testing.T, env []string, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(env, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func runGit(env []string, dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
