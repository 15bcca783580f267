package local_test

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/sshdtest"
	"github.com/wharfhub/wharf/hub"
)

func TestAnSSHCloneFromASessionOffersTheKeyOfItsHostOnly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	srv := sshdtest.Start(t)
	me, err := user.Current()
	is.NoErr(err)
	root := t.TempDir()
	_, err = execOutput(tool(t, "git", "git"), "init", "-q", "--bare", filepath.Join(root, "repo.git"))
	is.NoErr(err)
	v, broker := newBroker()
	mine, other := unlockedSSH(t, v, "mine"), unlockedSSH(t, v, "other")
	broker.LendSSH("mine", "other")
	host := srv.Host()
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker, Logins: []hub.SessionLogin{
		{Host: host, CredentialID: "mine", Type: hub.CredentialSSH, PublicKey: mine.PublicKey},
		{Host: "other.example", CredentialID: "other", Type: hub.CredentialSSH, PublicKey: other.PublicKey},
	}}, t.TempDir())
	// The session's own ssh command, told where the test server's host
	// key is known (ssh reads known_hosts from the account's home).
	sshCmd := []string{"GIT_SSH_COMMAND=" + l.get("GIT_SSH_COMMAND") + " -o UserKnownHostsFile=" + srv.KnownHosts +
		" -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes"}
	remote := fmt.Sprintf("ssh://%s@%s/%s", me.Username, host, filepath.Join(root, "repo.git"))

	srv.Authorize(t, other.PublicKey)
	_, err = l.run(t, t.TempDir(), sshCmd, "", "git", "ls-remote", remote)
	is.True(err != nil) // the agent holds the other host's key, but ssh never offers it here

	srv.Authorize(t, mine.PublicKey)
	dest := filepath.Join(t.TempDir(), "clone")
	out, err := l.run(t, t.TempDir(), sshCmd, "", "git", "clone", "-q", remote, dest)
	is.NoErr(err) // the host's own key gets in
	if err != nil {
		t.Logf("git: %s\nsshd: %s", out, srv)
	}
	_, err = os.Stat(filepath.Join(dest, ".git"))
	is.NoErr(err) // a clone

	broker.Revoke("mine")
	_, err = l.run(t, t.TempDir(), sshCmd, "", "git", "ls-remote", remote)
	is.True(err != nil) // an unassigned key stops logging in at once
}
