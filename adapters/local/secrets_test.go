package local_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

func TestNoTokenReachesTheSessionsFilesArgumentsOrLogs(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	const (
		httpsToken = "tok-https-7a1e0c55"
		ghToken    = "tok-gh-41b8d2e9"
		glabToken  = "tok-glab-93f0aa17"
	)
	v, broker := newBroker()
	sealed, err := v.SealToken([]byte(httpsToken))
	is.NoErr(err)
	broker.LendToken("git.example", fakes.BrokerToken{CredentialID: "t", Username: "ann", Sealed: sealed})
	pgp := unlockedOpenPGP(t, v, "p")
	broker.LendSigning("p")
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
		Logins:  []hub.SessionLogin{{Host: "git.example", CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}},
		Signing: &hub.SessionSigning{CredentialID: "p", Type: hub.CredentialOpenPGP, PublicKey: pgp.PublicKey, Fingerprint: pgp.Fingerprint},
		CLITokens: []hub.SessionCLIToken{
			{Tool: hub.ToolGH, Host: "github.com", CredentialID: "g", Token: []byte(ghToken)},
			{Tool: hub.ToolGLab, Host: "gitlab.example:8443", CredentialID: "l", Token: []byte(glabToken)},
		}}, t.TempDir())

	out, err := l.run(t, t.TempDir(), nil, "protocol=https\nhost=git.example\n\n", "git", "credential", "fill")
	is.NoErr(err)                                                        // git asks wharf git-credential
	is.True(strings.Contains(out, "username=ann\npassword="+httpsToken)) // which answers with the lent token
	out, err = l.run(t, t.TempDir(), nil, "protocol=https\nhost=other.example\n\n", "git", "-c", "credential.interactive=never", "credential", "fill")
	is.True(err != nil && !strings.Contains(out, httpsToken)) // and nothing for another host

	is.Equal(l.get("GH_TOKEN"), ghToken)                              // gh reads its token from the environment only
	is.Equal(l.get("GH_HOST"), "github.com")                          // for its host
	is.Equal(l.get("GITLAB_TOKEN"), glabToken)                        // as glab does
	is.Equal(l.get("GITLAB_HOST"), "gitlab.example:8443")             // for its host
	is.True(!strings.Contains(strings.Join(l.env, "\n"), httpsToken)) // the HTTPS token is never in the environment

	var files int
	is.NoErr(filepath.WalkDir(l.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, secret := range []string{httpsToken, ghToken, glabToken} {
			if bytes.Contains(b, []byte(secret)) {
				return fmt.Errorf("%s holds a token", path)
			}
		}
		return nil
	})) // no file of the runtime folder holds a token
	is.True(files >= 5) // among its config files, scripts and public keys

	argv, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pidOf(l)))
	if err == nil {
		for _, secret := range []string{httpsToken, ghToken, glabToken} {
			is.True(!bytes.Contains(argv, []byte(secret))) // nor the child's arguments
		}
	}
	for _, secret := range []string{httpsToken, ghToken, glabToken} {
		is.True(!strings.Contains(l.logs.String(), secret)) // nor a log line
	}
}
