package local_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/githttptest"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

func TestGitOverHTTPSGetsTheTokenForItsHostOnlyAndNeverTheUsersNetrc(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const token = "tok-https-2f9c41d7"
	root := t.TempDir()
	git := tool(t, "git", "git")
	_, err := execOutput(git, "init", "-q", "--bare", filepath.Join(root, "repo.git"))
	is.NoErr(err)
	right := githttptest.New(t, root, "ann", token, true)
	wrong := githttptest.New(t, root, "ann", token, true) // another host:port, the same token would open it
	v, broker := newBroker()
	sealed, err := v.SealToken([]byte(token))
	is.NoErr(err)
	broker.LendToken(right.Host(), fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	home := t.TempDir()
	// The user's own .netrc would let git into both servers: a session
	// must not get it.
	is.NoErr(os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine 127.0.0.1 login ann password "+token+"\n"), 0o600))
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
		Logins: []hub.SessionLogin{{Host: right.Host(), CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}}}, home)
	ca := []string{"GIT_SSL_CAINFO=" + right.CAFile(t), "GIT_TERMINAL_PROMPT=0"}

	out, err := l.run(t, t.TempDir(), ca, "", "git", "ls-remote", right.URL+"/repo.git")
	is.NoErr(err) // the right host lets git in with the Hub's token
	if err != nil {
		t.Log(out)
	}
	dest := filepath.Join(t.TempDir(), "clone")
	out, err = l.run(t, t.TempDir(), ca, "", "git", "clone", "-q", right.URL+"/repo.git", dest)
	is.NoErr(err) // and clones
	if err != nil {
		t.Log(out)
	}
	_, err = os.Stat(filepath.Join(dest, ".git"))
	is.NoErr(err) // a clone

	_, err = l.run(t, t.TempDir(), ca, "", "git", "ls-remote", wrong.URL+"/repo.git")
	is.True(err != nil)                 // another host gets nothing
	is.Equal(len(wrong.Passwords()), 0) // not even a wrong password: neither the token nor the user's .netrc reached it

	broker.Revoke("t")
	_, err = l.run(t, t.TempDir(), ca, "", "git", "ls-remote", right.URL+"/repo.git")
	is.True(err != nil) // a revoked token is refused at the next request
	for _, p := range right.Passwords() {
		is.Equal(p, token) // the right host only ever got the token
	}
	is.True(!strings.Contains(l.logs.String(), token)) // which no log line holds
}
