package httpapi_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/hub/service"
)

// encryptedSSHKey returns an ed25519 key in OpenSSH format encrypted with
// passphrase.
func encryptedSSHKey(t *testing.T, passphrase string) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "enc", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block))
}

// TestBadCredentialInputIsRefusedAndChangesNothing sends every kind of
// bad input the credentials family takes, each with the status and
// message it must get; afterwards the store, the vault's unlocked keys
// and the catalog are as they were.
func TestBadCredentialInputIsRefusedAndChangesNothing(t *testing.T) {
	// Each row comes from its own client (a trusted proxy names it), so
	// the rate limits, which count per user and client, stay out of it.
	s := newServer(t, service.Config{}, nil, httpapi.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	auth := bearer(s.login(t, "ann", annPassword))
	s.repo(t, "/home/ann/app")
	if r := s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":false}`, auth...); r.status != 200 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	key := sshKeyPEM(t)
	encrypted := encryptedSSHKey(t, "key pass")
	s.secret(key)
	s.secret(encrypted)
	s.secret("key pass")
	existing := s.credential(t, "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "Existing", "capabilities": []string{"ssh-authentication"}, "privateKey": key}), auth)
	protected := s.credential(t, "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "Protected", "capabilities": []string{"ssh-signing"}, "privateKey": encrypted, "passphrase": "key pass"}), auth)
	s.credential(t, "/api/hub/credentials/"+protected.ID+"/lock", `{}`, auth)
	tok := s.credential(t, "/api/hub/credentials/token", `{"name":"t","host":"github.com","token":"tok-5f3a9c1e","capabilities":["https-git"]}`, auth)
	s.secret("tok-5f3a9c1e")
	id := existing.ID
	gen := func(pass string) string {
		return jsonBody(t, map[string]any{"name": "k", "capabilities": []string{"ssh-authentication"}, "passphrase": pass})
	}
	token := func(host, value string) string {
		return jsonBody(t, map[string]any{"name": "t", "host": host, "token": value, "capabilities": []string{"https-git"}})
	}
	row := 0
	for _, tc := range []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"generate without a passphrase", "/api/hub/credentials/ssh/generate", gen(""), 400, "passphrase must be a non-empty string"},
		{"generate with an invisible passphrase", "/api/hub/credentials/ssh/generate", gen("\u200b"), 400, "passphrase must be a non-empty string"},
		{"generate with a control character", "/api/hub/credentials/ssh/generate", gen("pass\x07word"), 400, "passphrase must not contain control characters"},
		{"generate with a passphrase too long", "/api/hub/credentials/ssh/generate", gen(strings.Repeat("p", 4097)), 400, "passphrase must be at most 4096 bytes"},
		{"generate with unknown capabilities", "/api/hub/credentials/ssh/generate", `{"name":"k","capabilities":["https-git"],"passphrase":"p"}`, 400, "an ssh credential's capabilities are ssh-authentication and ssh-signing"},
		{"generate with an unknown field", "/api/hub/credentials/ssh/generate", `{"name":"k","capabilities":["ssh-signing"],"passphrase":"p","comment":"x"}`, 400, `request contains an unknown field: "comment"`},
		{"import garbage", "/api/hub/credentials/ssh/import", `{"name":"k","capabilities":["ssh-signing"],"privateKey":"not a key"}`, 400, "the text is not an SSH private key in OpenSSH, PEM or PKCS#8 format"},
		{"import an oversized body", "/api/hub/credentials/ssh/import", `{"name":"k","capabilities":["ssh-signing"],"privateKey":"` + strings.Repeat("A", 1_100_001) + `"}`, 400, "request body is larger than 1100000 bytes"},
		{"import an encrypted key without its passphrase", "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "k", "capabilities": []string{"ssh-signing"}, "privateKey": encrypted}), 400, "the key is encrypted: its passphrase is required"},
		{"import an encrypted key with a wrong passphrase", "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "k", "capabilities": []string{"ssh-signing"}, "privateKey": encrypted, "passphrase": "nope"}), 400, "the passphrase is wrong"},
		{"import a key twice", "/api/hub/credentials/ssh/import", jsonBody(t, map[string]any{"name": "k", "capabilities": []string{"ssh-signing"}, "privateKey": key}), 400, "an SSH credential with this fingerprint already exists"},
		{"import an OpenPGP block that is not a key", "/api/hub/credentials/openpgp/import", `{"name":"k","privateKey":"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nnonsense\n-----END PGP PRIVATE KEY BLOCK-----\n"}`, 400, "the OpenPGP key is damaged or uses a format the Hub cannot read"},
		{"generate an OpenPGP key without a passphrase", "/api/hub/credentials/openpgp/generate", `{"name":"k","userId":"Ann","passphrase":""}`, 400, "passphrase must be a non-empty string"},
		{"a token for *", "/api/hub/credentials/token", token("*", "v"), 400, "host must be a literal DNS name or IP address, not a pattern"},
		{"a token for github.com*", "/api/hub/credentials/token", token("github.com*", "v"), 400, "host must be a literal DNS name or IP address, not a pattern"},
		{"a token for a b", "/api/hub/credentials/token", token("a b", "v"), 400, "host must not contain white space or control characters"},
		{"a token for a host with user information", "/api/hub/credentials/token", token("https://u:p@h", "v"), 400, "host must not contain user information"},
		{"a token with a line break", "/api/hub/credentials/token", token("github.com", "a\nb"), 400, "token must not contain NUL, CR or LF"},
		{"a token with a carriage return", "/api/hub/credentials/token", token("github.com", "a\rb"), 400, "token must not contain NUL, CR or LF"},
		{"a token with a NUL", "/api/hub/credentials/token", token("github.com", "a\x00b"), 400, "token must not contain NUL, CR or LF"},
		{"a token with an empty user name", "/api/hub/credentials/token", `{"name":"t","host":"h.example","username":"","token":"v","capabilities":["https-git"]}`, 400, "username must be a non-empty string when it is given"},
		{"a token for two CLIs", "/api/hub/credentials/token", `{"name":"t","host":"h.example","token":"v","capabilities":["github-cli","gitlab-cli"]}`, 400, "a token cannot have both github-cli and gitlab-cli"},
		{"unlock with a wrong passphrase", "/api/hub/credentials/" + protected.ID + "/unlock", `{"passphrase":"nope"}`, 400, "the passphrase is wrong"},
		{"unlock a protected key without one", "/api/hub/credentials/" + protected.ID + "/unlock", `{}`, 400, "SSH private key passphrase is required"},
		{"unlock a token", "/api/hub/credentials/" + tok.ID + "/unlock", `{"passphrase":"x"}`, 400, "token credentials cannot be locked or unlocked"},
		{"unlock an unknown credential", "/api/hub/credentials/nope/unlock", `{"passphrase":"x"}`, 404, "unknown credential: nope"},
		{"lock with a body", "/api/hub/credentials/" + id + "/lock", `{"now":true}`, 400, `request contains an unknown field: "now"`},
		{"a malformed credential id", "/api/hub/credentials/a.b/enable", `{}`, 400, "credential id is invalid"},
		{"delete without confirmation", "/api/hub/credentials/" + id + "/delete", `{}`, 400, "credential deletion requires confirmation"},
		{"delete with a false confirmation", "/api/hub/credentials/" + id + "/delete", `{"confirm":false}`, 400, "credential deletion requires confirmation"},
		{"assign to an unknown workspace", "/api/hub/credentials/" + id + "/assign", `{"workspaceId":"nope","role":"signing"}`, 404, "unknown workspace: nope"},
		{"assign signing to a key that cannot sign", "/api/hub/credentials/" + id + "/assign", `{"workspaceId":"app","role":"signing"}`, 400, "credential cannot sign: it has neither ssh-signing nor openpgp-signing"},
		{"assign a host to signing", "/api/hub/credentials/" + id + "/assign", `{"workspaceId":"app","role":"signing","host":"github.com"}`, 400, "host is allowed only with role authentication"},
		{"assign for a pattern host", "/api/hub/credentials/" + id + "/assign", `{"workspaceId":"app","role":"authentication","host":"*.example.com"}`, 400, "host must be a literal DNS name or IP address, not a pattern"},
		{"assign a token to another host", "/api/hub/credentials/" + tok.ID + "/assign", `{"workspaceId":"app","role":"authentication","host":"gitlab.com"}`, 400, "credential host does not match assignment host: gitlab.com"},
		{"the workspace pair with nothing", "/api/hub/workspaces/app/credential-assignments", `{}`, 400, "at least one of authentication and signing is required"},
		{"unassign with a host but no role", "/api/hub/credentials/" + id + "/unassign", `{"workspaceId":"app","host":"github.com"}`, 400, "host is allowed only with role authentication"},
		{"an unknown tool", "/api/hub/credential-tools/nmap", `{"path":null}`, 400, "credential tool is invalid"},
		{"a relative tool path", "/api/hub/credential-tools/ssh", `{"path":"bin/ssh"}`, 400, "tool path must be an absolute path of at most 32768 bytes without control characters"},
		{"a tool path without the field", "/api/hub/credential-tools/ssh", `{}`, 400, "path is required (null clears the override)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			before := s.snapshot(t)
			unlocked := s.vault.Unlocked(id)
			row++
			r := s.do(t, "POST", tc.path, tc.body, append(auth, "X-Forwarded-For", "10.0.0."+strconv.Itoa(row))...)
			is.Equal(r.status, tc.status)            // status
			is.Equal(r.errorText(t), tc.msg)         // message
			is.Equal(s.snapshot(t), before)          // the store is unchanged
			is.Equal(s.vault.Unlocked(id), unlocked) // and so is the vault
			is.True(!s.vault.Unlocked(protected.ID)) // the locked key stays locked
		})
	}
}

// TestCrossOriginCookiePostsToCredentialsAreRefused: a page on another
// origin cannot make or change credentials with the owner's cookie.
func TestCrossOriginCookiePostsToCredentialsAreRefused(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	before := s.snapshot(t)
	for _, path := range []string{"/api/hub/credentials/ssh/generate", "/api/hub/credentials/token", "/api/hub/credential-tools/ssh"} {
		r := s.do(t, "POST", path, `{"name":"k","capabilities":["ssh-signing"],"passphrase":"p"}`,
			"Cookie", s.cookieName()+"="+id, "Origin", "http://evil.example")
		is.Equal(r.status, http.StatusForbidden)                  // refused
		is.Equal(r.errorText(t), "cross-origin request rejected") // with its message
	}
	is.Equal(s.snapshot(t), before) // nothing made
}

// TestGenerateAndImportAreLimitedPerUserAndClient: the sixth generate or
// import in a minute answers 429 with Retry-After, the eleventh unlock or
// test likewise, and a minute later the budget is back.
func TestGenerateAndImportAreLimitedPerUserAndClient(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	for range 5 {
		r := s.do(t, "POST", "/api/hub/credentials/ssh/import", `{"name":"k","capabilities":["ssh-signing"],"privateKey":"nonsense"}`, auth...)
		is.Equal(r.status, http.StatusBadRequest) // counted, though refused
	}
	r := s.do(t, "POST", "/api/hub/credentials/ssh/generate", `{"name":"k","capabilities":["ssh-signing"],"passphrase":"p"}`, auth...)
	is.Equal(r.status, http.StatusTooManyRequests)                                          // the sixth
	is.Equal(r.errorText(t), "too many credential operations; wait a minute and try again") // says so
	wait, err := strconv.Atoi(r.header.Get("Retry-After"))
	is.NoErr(err)                   // with Retry-After
	is.True(wait > 0 && wait <= 60) // within the window
	for range 10 {
		is.Equal(s.do(t, "POST", "/api/hub/credentials/nope/test", `{}`, auth...).status, 404) // another budget
	}
	is.Equal(s.do(t, "POST", "/api/hub/credentials/nope/unlock", `{"passphrase":"x"}`, auth...).status, http.StatusTooManyRequests) // shared by unlock and test
	bob := bearer(s.login(t, "bob", bobPassword))
	is.Equal(s.do(t, "POST", "/api/hub/credentials/nope/test", `{}`, bob...).status, 404) // another user has their own
	s.clock.Advance(61 * time.Second)
	is.Equal(s.do(t, "POST", "/api/hub/credentials/nope/test", `{}`, auth...).status, 404) // a minute later, again
}
