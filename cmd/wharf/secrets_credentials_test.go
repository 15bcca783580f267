package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
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
