package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub/service"
)

// credentialReply is a credential as the API answers it.
type credentialReply struct {
	ID, Name, Type string
	Capabilities   []string
	Enabled        bool
	CreatedAt      string
	Metadata       struct{ PublicKey, Fingerprint, Host, Username string }
	Assignments    []struct{ WorkspaceID, CredentialID, Role, Host string }
	Readiness      []struct{ Layer, Status, Message string }
}

// credential posts body to path and decodes the credential it answers.
func (s *testServer) credential(t *testing.T, path, body string, auth []string) credentialReply {
	t.Helper()
	r := s.do(t, "POST", path, body, auth...)
	if r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, r.status, r.body)
	}
	var out struct{ Credential credentialReply }
	r.json(t, &out)
	return out.Credential
}

// credentials lists the catalog.
func (s *testServer) credentials(t *testing.T, auth []string) []credentialReply {
	t.Helper()
	var out struct{ Credentials []credentialReply }
	s.do(t, "GET", "/api/hub/credentials", "", auth...).json(t, &out)
	return out.Credentials
}

// sshKeyPEM returns a new unencrypted ed25519 key in OpenSSH format.
func sshKeyPEM(t *testing.T) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "imported")
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnSSHKeyIsGeneratedUnlockedAssignedAndDeletedOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.secret("correct horse staple")
	s.repo(t, "/home/ann/app")
	is.Equal(s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":false}`, auth...).status, 200) // registered

	c := s.credential(t, "/api/hub/credentials/ssh/generate",
		`{"name":"Laptop key","capabilities":["ssh-signing","ssh-authentication"],"passphrase":"correct horse staple"}`, auth)
	is.Equal(c.Type, "ssh")                                                 // an SSH key
	is.Equal(c.Capabilities, []string{"ssh-authentication", "ssh-signing"}) // in the contract's order
	is.True(strings.HasPrefix(c.Metadata.PublicKey, "ssh-ed25519 "))        // its public key
	is.True(strings.HasPrefix(c.Metadata.Fingerprint, "SHA256:"))           // and fingerprint
	is.Equal(c.Readiness[0].Message, "The SSH credential requires unlock.") // generated locked
	is.Equal(len(c.Assignments), 0)                                         // assigned nowhere
	is.Equal(len(s.credentials(t, auth)), 1)                                // listed
	base := "/api/hub/credentials/" + c.ID

	var pk struct{ ID, Type, PublicKey, Fingerprint string }
	s.do(t, "GET", base+"/public-key", "", auth...).json(t, &pk)
	is.Equal(pk.PublicKey, c.Metadata.PublicKey) // the public key endpoint

	r := s.do(t, "POST", base+"/unlock", `{"passphrase":"wrong horse"}`, auth...)
	is.Equal(r.status, http.StatusBadRequest) // a wrong passphrase
	c = s.credential(t, base+"/unlock", `{"passphrase":"correct horse staple"}`, auth)
	is.Equal(c.Readiness[0].Status, "ready") // unlocked

	var test struct {
		Results []struct{ Layer, Status, Message string }
	}
	s.do(t, "POST", base+"/test", `{}`, auth...).json(t, &test)
	is.Equal(test.Results[0].Message, "The SSH credential is loaded in the Hub.") // the test says so

	var as struct {
		Assignment struct{ WorkspaceID, CredentialID, Role, Host string }
	}
	s.do(t, "POST", base+"/assign", `{"workspaceId":"app","role":"authentication","host":"GitHub.COM."}`, auth...).json(t, &as)
	is.Equal(as.Assignment.Host, "github.com") // the host normalized
	var pair struct{ Assignments []struct{ Role string } }
	s.do(t, "POST", "/api/hub/workspaces/app/credential-assignments", jsonBody(t, map[string]any{"signing": map[string]string{"credentialId": c.ID}}), auth...).json(t, &pair)
	is.Equal(len(pair.Assignments), 1) // the signing default set

	var st stateReply
	s.do(t, "GET", "/api/hub/state", "", auth...).json(t, &st)
	is.Equal(st.Workspaces[0].CredentialAssignments.Authentication, []string{"Laptop key"}) // the state names it
	is.Equal(st.Workspaces[0].CredentialAssignments.Signing, []string{"Laptop key"})

	c = s.credential(t, base+"/lock", `{}`, auth)
	is.Equal(c.Readiness[0].Status, "unavailable") // locked
	c = s.credential(t, base+"/disable", `{}`, auth)
	is.Equal(c.Enabled, false) // disabled
	c = s.credential(t, base+"/enable", `{}`, auth)
	is.Equal(c.Enabled, true) // enabled again

	r = s.do(t, "POST", base+"/delete", `{"confirm":true}`, auth...)
	is.Equal(r.status, http.StatusConflict)                                      // still assigned
	is.Equal(r.errorText(t), "credential is assigned to 2 workspace default(s)") // says how often
	var un struct{ Removed bool }
	s.do(t, "POST", base+"/unassign", `{"workspaceId":"app","role":"signing"}`, auth...).json(t, &un)
	is.True(un.Removed) // the signing default removed
	var del struct{ Deleted bool }
	s.do(t, "POST", base+"/delete", `{"confirm":true,"unassign":true}`, auth...).json(t, &del)
	is.True(del.Deleted)                                                  // deleted with its assignment
	is.Equal(len(s.credentials(t, auth)), 0)                              // gone
	is.Equal(s.do(t, "GET", base+"/public-key", "", auth...).status, 404) // for good
}

func TestKeysAndTokensAreImportedAndTested(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	key := sshKeyPEM(t)
	s.secret(key)
	s.secret("ghp_secretvalue123")
	s.secret("open sesame pgp")

	c := s.credential(t, "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "Imported", "capabilities": []string{"ssh-authentication"}, "privateKey": key}), auth)
	is.Equal(c.Readiness[0].Status, "ready") // an imported key is unlocked
	r := s.do(t, "POST", "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "Again", "capabilities": []string{"ssh-authentication"}, "privateKey": key}), auth...)
	is.Equal(r.status, http.StatusBadRequest)                                          // the same key twice
	is.Equal(r.errorText(t), "an SSH credential with this fingerprint already exists") // says so

	tok := s.credential(t, "/api/hub/credentials/token", `{"name":"GitHub","host":"https://GitHub.com/","token":"ghp_secretvalue123","capabilities":["github-cli","https-git"]}`, auth)
	is.Equal(tok.Metadata.Host, "github.com")                       // normalized
	is.Equal(tok.Capabilities, []string{"https-git", "github-cli"}) // ordered
	var test struct {
		Results []struct{ Layer, Status, Message string }
	}
	s.do(t, "POST", "/api/hub/credentials/"+tok.ID+"/test", `{}`, auth...).json(t, &test)
	is.Equal(test.Results[0].Message, "The token credential is available.") // its value opens
	r = s.do(t, "GET", "/api/hub/credentials/"+tok.ID+"/public-key", "", auth...)
	is.Equal(r.status, http.StatusBadRequest)                             // a token has none
	is.Equal(r.errorText(t), "token credentials do not have public keys") // says so
	r = s.do(t, "POST", "/api/hub/credentials/"+tok.ID+"/lock", `{}`, auth...)
	is.Equal(r.errorText(t), "token credentials cannot be locked or unlocked") // nor a lock

	pgp := s.credential(t, "/api/hub/credentials/openpgp/generate", `{"name":"Signing","userId":"Ann <ann@example.com>","passphrase":"open sesame pgp"}`, auth)
	is.Equal(pgp.Capabilities, []string{"openpgp-signing"}) // signs
	r = s.do(t, "POST", "/api/hub/credentials/"+pgp.ID+"/unlock", `{"passphrase":""}`, auth...)
	is.Equal(r.status, http.StatusBadRequest) // an OpenPGP key needs a passphrase
	s.credential(t, "/api/hub/credentials/"+pgp.ID+"/unlock", `{"passphrase":"open sesame pgp"}`, auth)
	s.do(t, "POST", "/api/hub/credentials/"+pgp.ID+"/test", `{}`, auth...).json(t, &test)
	is.Equal(test.Results[0].Message, "The fixed Hub challenge was signed and verified locally.") // it signs, verifiably
	var pk struct{ PublicKey string }
	s.do(t, "GET", "/api/hub/credentials/"+pgp.ID+"/public-key", "", auth...).json(t, &pk)
	is.True(strings.HasPrefix(pk.PublicKey, "-----BEGIN PGP PUBLIC KEY BLOCK-----")) // armored
	s.credential(t, "/api/hub/credentials/"+pgp.ID+"/disable", `{}`, auth)
	r = s.do(t, "POST", "/api/hub/credentials/"+pgp.ID+"/test", `{}`, auth...)
	is.Equal(r.status, http.StatusConflict)                    // a disabled OpenPGP key is not tested
	is.Equal(r.errorText(t), "OpenPGP credential is disabled") // says so

	// An armored key exported from the vault's own generation imports.
	exported := s.exportOpenPGP(t)
	s.secret(exported)
	imp := s.credential(t, "/api/hub/credentials/openpgp/import", jsonBody(t, map[string]string{"name": "Imported PGP", "privateKey": exported}), auth)
	is.Equal(imp.Readiness[0].Status, "ready") // an unprotected import is unlocked
}

func TestTheCredentialToolsAreListedAndOverridden(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.tools.SetPath("/usr/bin")
	s.tools.Install("/usr/bin/ssh", "ssh", "OpenSSH_9.6p1")
	s.tools.Install("/opt/ssh", "ssh", "OpenSSH_9.9p1")

	var list struct {
		Tools []struct {
			Tool     string
			Path     *string
			Version  *string
			Guidance *string
		}
	}
	s.do(t, "GET", "/api/hub/credential-tools", "", auth...).json(t, &list)
	is.Equal(len(list.Tools), 9)                  // every tool
	is.Equal(list.Tools[0].Tool, "ssh")           // in the contract's order
	is.Equal(*list.Tools[0].Path, "/usr/bin/ssh") // found on PATH
	is.Equal(list.Tools[4].Tool, "gpg")           // a missing one
	is.True(list.Tools[4].Path == nil)            // has no path
	is.True(list.Tools[4].Guidance != nil)        // and says how to get it

	var one struct{ Tool struct{ Path *string } }
	s.do(t, "POST", "/api/hub/credential-tools/ssh", `{"path":"/opt/ssh"}`, auth...).json(t, &one)
	is.Equal(*one.Tool.Path, "/opt/ssh") // overridden
	before := s.snapshot(t)
	r := s.do(t, "POST", "/api/hub/credential-tools/ssh", `{"path":"/opt/missing"}`, auth...)
	is.Equal(r.status, http.StatusBadRequest)                        // a path that is not the tool
	is.Equal(r.errorText(t), "tool override failed validation: ssh") // says which
	is.Equal(s.snapshot(t), before)                                  // and changes nothing
	s.do(t, "POST", "/api/hub/credential-tools/ssh/test", `{}`, auth...).json(t, &one)
	is.Equal(*one.Tool.Path, "/opt/ssh") // the override holds
	s.do(t, "POST", "/api/hub/credential-tools/ssh", `{"path":null}`, auth...).json(t, &one)
	is.Equal(*one.Tool.Path, "/usr/bin/ssh") // cleared: PATH again
	r = s.do(t, "POST", "/api/hub/credential-tools/nmap", `{"path":null}`, auth...)
	is.Equal(r.errorText(t), "credential tool is invalid") // an unknown tool
}

// exportOpenPGP makes an unprotected OpenPGP signing key and returns it
// armored, as `gpg --armor --export-secret-keys` would.
func (s *testServer) exportOpenPGP(t *testing.T) string {
	t.Helper()
	// Made before the test clock's now, so the key is valid then.
	made := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	e, err := openpgp.NewEntity("Imported", "", "imported@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: made})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w, err := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestAUseTheOwnerMustApproveWaitsForTheDashboard: a token assigned with
// ask-every-time is held when the session's credential helper asks for
// it, listed as waiting, and handed over once allowed; a denied one is
// refused; the use log tells them apart.
func TestAUseTheOwnerMustApproveWaitsForTheDashboard(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.secret("ghp_approval_value")
	s.repo(t, "/home/ann/app")
	is.Equal(s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":false}`, auth...).status, 200) // registered
	tok := s.credential(t, "/api/hub/credentials/token", `{"name":"GitHub","host":"github.com","token":"ghp_approval_value","capabilities":["https-git"]}`, auth)
	var as struct{ Assignment struct{ UsePolicy string } }
	s.do(t, "POST", "/api/hub/credentials/"+tok.ID+"/assign", `{"workspaceId":"app","role":"authentication","host":"github.com","usePolicy":"ask-every-time"}`, auth...).json(t, &as)
	is.Equal(as.Assignment.UsePolicy, "ask-every-time") // the policy is the assignment's
	is.Equal(s.do(t, "POST", "/api/hub/sessions/app/start", "", auth...).status, 200)
	broker := s.backend.Spec("app").Credentials.Broker

	type answer struct {
		token []byte
		err   error
	}
	ask := func() <-chan answer {
		out := make(chan answer, 1)
		go func() {
			_, v, err := broker.Token(context.Background(), "github.com")
			out <- answer{v, err}
		}()
		return out
	}
	waiting := func() string { // the one approval the dashboard sees, once it is there
		t.Helper()
		var list struct {
			Approvals []struct{ ID, WorkspaceID, CredentialName, Purpose, Host string }
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(list.Approvals) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no approval listed")
			}
			s.do(t, "GET", "/api/hub/credential-approvals", "", auth...).json(t, &list)
			runtime.Gosched()
		}
		a := list.Approvals[0]
		is.Equal(a.CredentialName, "GitHub") // what is asked for
		is.Equal(a.Purpose, "token")
		is.Equal(a.Host, "github.com")
		is.Equal(a.WorkspaceID, "app") // and by whom
		return a.ID
	}

	got := ask()
	id := waiting()
	is.Equal(s.do(t, "POST", "/api/hub/credential-approvals/"+id, `{"allow":true}`, auth...).status, 200) // allowed
	a := <-got
	is.NoErr(a.err)                                 // the helper gets it
	is.Equal(string(a.token), "ghp_approval_value") // the token

	got = ask()
	id = waiting()
	is.Equal(s.do(t, "POST", "/api/hub/credential-approvals/"+id, `{"allow":false}`, auth...).status, 200) // denied
	a = <-got
	is.True(a.err != nil) // the helper gets nothing
	r := s.do(t, "POST", "/api/hub/credential-approvals/"+id, `{"allow":true}`, auth...)
	is.Equal(r.status, http.StatusNotFound) // a decided approval is gone

	var uses struct {
		Uses []struct{ WorkspaceID, Purpose, Host, Outcome, By string }
	}
	s.do(t, "GET", "/api/hub/credentials/"+tok.ID+"/uses", "", auth...).json(t, &uses)
	is.Equal(len(uses.Uses), 2)               // both uses logged
	is.Equal(uses.Uses[0].Outcome, "denied")  // newest first
	is.Equal(uses.Uses[1].Outcome, "allowed") // then the first
	is.Equal(uses.Uses[1].By, "ann")          // by whom
	is.Equal(uses.Uses[1].Purpose, "token")   // for what
	is.Equal(uses.Uses[1].Host, "github.com") // and where
}
