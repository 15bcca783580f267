package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest"
)

// exerciseCredentials is the credentials family's part of the secret
// exposure scenario: it makes, unlocks, tests and assigns a key of each
// kind and a token, registering every passphrase, private key and token
// value where it learns it. None belongs anywhere: the state directory
// holds only sealed key material.
func exerciseCredentials(ctx context.Context, t *testing.T, sec *daemontest.Secrets, owner *daemontest.Client, ws string) {
	is := is.New(t)
	post := func(path string, body any) map[string]any {
		t.Helper()
		var out map[string]any
		status, raw, err := owner.Do(ctx, "POST", path, body, &out)
		is.NoErr(err) // answered
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, status, raw)
		}
		return out
	}
	id := func(answer map[string]any) string { return answer["credential"].(map[string]any)["id"].(string) }

	sshPass := "ssh generate passphrase " + rand.Text()
	sec.Register("SSH key passphrase", sshPass)
	generated := id(post("api/hub/credentials/ssh/generate", map[string]any{"name": "generated", "capabilities": []string{"ssh-authentication", "ssh-signing"}, "passphrase": sshPass}))
	post("api/hub/credentials/"+generated+"/unlock", map[string]string{"passphrase": sshPass})

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	is.NoErr(err)
	importPass := "import passphrase " + rand.Text()
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "imported", []byte(importPass))
	is.NoErr(err)
	privateKey := string(pem.EncodeToMemory(block))
	sec.Register("imported SSH private key", privateKey)
	sec.Register("imported SSH key passphrase", importPass)
	post("api/hub/credentials/ssh/import", map[string]any{"name": "imported", "capabilities": []string{"ssh-authentication"}, "privateKey": privateKey, "passphrase": importPass})

	pgpPass := "openpgp passphrase " + rand.Text()
	sec.Register("OpenPGP key passphrase", pgpPass)
	pgp := id(post("api/hub/credentials/openpgp/generate", map[string]any{"name": "signing", "userId": "Ann <ann@example.com>", "passphrase": pgpPass}))
	post("api/hub/credentials/"+pgp+"/unlock", map[string]string{"passphrase": pgpPass})
	post("api/hub/credentials/"+pgp+"/test", map[string]any{})

	token := "ghp_" + rand.Text()
	sec.Register("token value", token)
	tok := id(post("api/hub/credentials/token", map[string]any{"name": "github", "host": "github.com", "token": token, "capabilities": []string{"https-git", "github-cli"}}))
	post("api/hub/credentials/"+tok+"/test", map[string]any{})
	post("api/hub/credentials/"+tok+"/assign", map[string]any{"workspaceId": ws, "role": "authentication", "host": "github.com"})
	post("api/hub/workspaces/"+ws+"/credential-assignments", map[string]any{"signing": map[string]string{"credentialId": pgp}})
	status, _, err := owner.Do(ctx, "GET", "api/hub/credentials", nil, nil)
	is.NoErr(err)
	is.Equal(status, http.StatusOK) // listed
}

// exerciseClone is the clone jobs' part of the scenario: a clone of a
// source that never answers gets an answer typed into its terminal, as a
// password would be, and is cancelled. The answer belongs nowhere: not in
// the job's events, the logs or the state directory.
func exerciseClone(ctx context.Context, t *testing.T, sec *daemontest.Secrets, owner *daemontest.Client, dest string) {
	is := is.New(t)
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer stall.Close()
	var job struct{ JobID string }
	status, raw, err := owner.Do(ctx, "POST", "api/hub/clone-jobs", map[string]any{"url": stall.URL + "/private.git", "dest": dest}, nil)
	is.NoErr(err)
	is.Equal(status, http.StatusAccepted) // the clone runs
	is.NoErr(json.Unmarshal(raw, &job))
	answer := "clone password " + rand.Text()
	sec.Register("a clone's typed answer", answer)
	status, _, err = owner.Do(ctx, "POST", "api/hub/clone-jobs/"+job.JobID+"/input", map[string]string{"input": answer}, nil)
	is.NoErr(err)
	is.Equal(status, http.StatusOK) // typed into git's terminal
	status, _, err = owner.Do(ctx, "POST", "api/hub/clone-jobs/"+job.JobID+"/cancel", nil, nil)
	is.NoErr(err)
	is.Equal(status, http.StatusOK) // cancelled
	resp, err := owner.Request(ctx, "GET", "api/hub/clone-jobs/"+job.JobID+"/events", nil)
	is.NoErr(err)
	defer resp.Body.Close()
	_, err = daemontest.ReadSSE(resp.Body).Until(ctx, func(e daemontest.Event) bool { return e.Name == "result" })
	is.NoErr(err) // its events replayed to the end
}

// exerciseWorktrees is the worktree family's part of the scenario: a
// task's worktree is made, checked and deleted, and a fetch fails against
// a remote whose URL carries a password (as a pasted clone URL may): the
// password belongs nowhere, not in the answer's sanitized error nor in a
// log line reporting the failure.
func exerciseWorktrees(ctx context.Context, t *testing.T, sec *daemontest.Secrets, owner *daemontest.Client, ws, repo string) {
	is := is.New(t)
	op := func(name string, body map[string]any) map[string]any {
		t.Helper()
		body["sourceWorkspaceId"] = ws
		var out map[string]any
		status, raw, err := owner.Do(ctx, "POST", "api/hub/worktrees/"+name, body, &out)
		is.NoErr(err) // answered
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, status, raw)
		}
		return out
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=A", "-c", "user.email=a@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("commit", "-q", "--allow-empty", "-m", "first")
	created := op("create", map[string]any{"mode": "new-branch", "branch": "secret-task", "base": map[string]string{"kind": "local", "ref": git("branch", "--show-current")}})
	is.Equal(created["ok"], true) // a task's worktree
	if created["ok"] != true {
		t.Fatalf("create: %v", created)
	}
	pre := op("preflight-delete", map[string]any{"reference": "secret-task"})
	is.Equal(pre["ok"], true) // nothing blocks
	del := op("delete", map[string]any{"reference": "secret-task", "confirm": true, "stop": true})
	is.Equal(del["ok"], true) // deleted

	l, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	addr := l.Addr().String()
	l.Close() // nothing answers there now
	password := "remote-url-password-" + rand.Text()
	sec.Register("a password in a remote's URL", password)
	git("remote", "add", "origin", "https://ann:"+password+"@"+addr+"/app.git") // a remote with a password in its URL
	fetched := op("fetch", map[string]any{})
	is.Equal(fetched["ok"], false) // the fetch fails
}
