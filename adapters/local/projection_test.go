package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/local"
	"github.com/wharfhub/wharf/hub"
)

func TestASessionLentNothingGetsItsOwnFolderAndNoAmbientCredential(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	home := userHome(t)
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t)}, home,
		"SSH_AUTH_SOCK=/ambient/agent", "GH_TOKEN=ambient-gh", "GIT_CONFIG_GLOBAL=/ambient/config", "GNUPGHOME=/ambient/gnupg",
		"GIT_ASKPASS=/ambient/askpass", "NETRC=/ambient/netrc", "GITLAB_TOKEN=ambient-glab")

	fi, err := os.Stat(l.dir)
	is.NoErr(err)                                  // the folder exists while the session runs
	is.Equal(fi.Mode().Perm(), os.FileMode(0o700)) // and is private
	for _, k := range []string{"SSH_AUTH_SOCK", "GH_TOKEN", "GIT_ASKPASS", "NETRC", "GITLAB_TOKEN", local.CredentialsEnv} {
		is.True(!l.has(k)) // nothing ambient, and no credential socket when nothing is lent
	}
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GNUPGHOME", "GH_CONFIG_DIR", "GLAB_CONFIG_DIR"} {
		is.True(strings.HasPrefix(l.get(k), l.dir+"/")) // in the session's own folder
	}
	for _, k := range []string{"GNUPGHOME", "GH_CONFIG_DIR", "GLAB_CONFIG_DIR"} {
		entries, err := os.ReadDir(l.get(k))
		is.NoErr(err)
		is.Equal(len(entries), 0) // empty: no key, no login of the user's
	}
	is.Equal(l.get("GIT_CONFIG_NOSYSTEM"), "1")                       // no system config but its flattened part
	is.True(strings.Contains(l.get("GIT_SSH_COMMAND"), "-F '"+l.dir)) // ssh reads the session's ssh_config only
	is.Equal(l.get("HOME"), home)                                     // other programs keep the user's home

	out, err := l.run(t, t.TempDir(), nil, "", "git", "config", "--list", "--show-scope")
	is.NoErr(err) // git reads the session's config
	for _, want := range []string{"global\tuser.name=Ann Example", "global\talias.st=status --short",
		"global\tinit.defaultbranch=main", "global\tcore.excludesfile=" + filepath.Join(home, ".gitignore_global"),
		"command\tcredential.helper=", "command\tcommit.gpgsign=false"} {
		is.True(strings.Contains(out, want+"\n")) // the user's habits, with ~ expanded, and Wharf's own settings
	}
	for _, never := range []string{"ambient-header-token", "ambient-url-token", "secret_key", "signingkey", "store --file", "/usr/bin/gpg", "gpgsign=true"} {
		is.True(!strings.Contains(out, never)) // none of the user's credentials or signing
	}
	out, err = l.run(t, t.TempDir(), nil, "", "sh", "-c", "echo $HOME")
	is.NoErr(err)
	is.Equal(strings.TrimSpace(out), home)                             // a shell has the user's home
	is.Equal(l.lookPath(t, "git"), filepath.Join(l.dir, "bin", "git")) // git runs through the session's git
	out, err = l.run(t, t.TempDir(), nil, "", "git", "-c", "alias.home=!echo $HOME", "home")
	is.NoErr(err)
	is.Equal(strings.TrimSpace(out), filepath.Join(l.dir, "git-home")) // with a home of its own, where no .netrc is
	is.NoErr(l.rs.Stop(testContext(t)))
	_, err = os.Stat(l.dir)
	is.True(errors.Is(err, fs.ErrNotExist)) // the folder goes with the session
}

func TestTheSSHConfigOffersEachKeyToItsOwnHostAndPortOnly(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	sshPath := tool(t, "ssh", "openssh-client")
	v, broker := newBroker()
	ka, kb, kc := unlockedSSH(t, v, "a"), unlockedSSH(t, v, "b"), unlockedSSH(t, v, "c")
	broker.LendSSH("a", "b", "c")
	l := startLent(t, hub.SessionCredentials{
		Logins: []hub.SessionLogin{
			{Host: "git.example", CredentialID: "a", Type: hub.CredentialSSH, PublicKey: ka.PublicKey},
			{Host: "git.example:2222", CredentialID: "b", Type: hub.CredentialSSH, PublicKey: kb.PublicKey},
			{Host: "[::1]:2200", CredentialID: "c", Type: hub.CredentialSSH, PublicKey: kc.PublicKey},
			{Host: "tokens.example", CredentialID: "t", Type: hub.CredentialToken, HTTPS: true},
		},
		Tools: gitTools(t), Broker: broker,
	}, t.TempDir())
	sock := filepath.Join(l.dir, "agent.sock")
	is.Equal(l.get("SSH_AUTH_SOCK"), sock) // the session's agent
	cfg := filepath.Join(l.dir, "ssh_config")
	fi, err := os.Stat(cfg)
	is.NoErr(err)
	is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // private
	for _, c := range []struct {
		args      []string
		key       string // the login's key file, "" for none
		withAgent bool
	}{
		{[]string{"git.example"}, "login0.pub", true},
		{[]string{"git.example."}, "login0.pub", true},
		{[]string{"-p", "22", "GIT.example"}, "login0.pub", true},
		{[]string{"-p", "2222", "git.example"}, "login1.pub", true},
		{[]string{"-p", "2200", "::1"}, "login2.pub", true},
		{[]string{"::1"}, "", false},
		{[]string{"tokens.example"}, "", false},
		{[]string{"other.example"}, "", false},
	} {
		out, err := l.run(t, t.TempDir(), nil, "", sshPath, append([]string{"-F", cfg, "-G"}, c.args...)...)
		is.NoErr(err) // ssh reads the config
		var files []string
		agent := ""
		for _, line := range strings.Split(out, "\n") {
			if f, ok := strings.CutPrefix(line, "identityfile "); ok && f != "none" {
				files = append(files, filepath.Base(f))
			}
			if a, ok := strings.CutPrefix(line, "identityagent "); ok {
				agent = a
			}
		}
		if c.key == "" {
			is.Equal(len(files), 0) // no key for a host no login names
			is.Equal(agent, "none") // nor the agent
			continue
		}
		is.Equal(files, []string{c.key}) // exactly the login's key
		is.Equal(agent, sock)            // through the session's agent
	}
}

func TestAProjectionThatFailsLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	v, broker := newBroker()
	k := unlockedSSH(t, v, "a")
	broker.LendSSH("a")
	broker.End() // its agent can no longer be served
	b, logs := newBackend(t, modeServe, local.Options{RuntimeDir: filepath.Join(shortDir(t), "run")})
	_, err := b.Start(testContext(t), hub.WorkspaceSessionSpec{WorkspaceID: "alpha", Path: t.TempDir(),
		Credentials: hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
			Logins: []hub.SessionLogin{{Host: "git.example", CredentialID: "a", Type: hub.CredentialSSH, PublicKey: k.PublicKey}}}})
	is.Equal(hub.MessageOf(err), "the session's credentials could not be prepared") // refused clearly
	_, err = os.Stat(b.ProjectionDirOf("alpha"))
	is.True(errors.Is(err, fs.ErrNotExist))                                               // no folder, so no credential socket either
	is.Equal(b.Live(), int64(0))                                                          // no child
	is.True(strings.Contains(logs.String(), "session credentials could not be prepared")) // logged
}

func TestTheAgentAndCredentialSocketEndWithACrashedSession(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	v, broker := newBroker()
	k := unlockedSSH(t, v, "a")
	broker.LendSSH("a")
	l := startLent(t, hub.SessionCredentials{Tools: gitTools(t), Broker: broker,
		Logins: []hub.SessionLogin{{Host: "git.example", CredentialID: "a", Type: hub.CredentialSSH, PublicKey: k.PublicKey}}}, t.TempDir())
	for _, s := range []string{"agent.sock", "cred.sock"} {
		fi, err := os.Stat(filepath.Join(l.dir, s))
		is.NoErr(err)                                  // served while the session runs
		is.Equal(fi.Mode().Perm(), os.FileMode(0o600)) // privately
	}
	is.NoErr(syscall.Kill(local.Pid(l.rs), syscall.SIGKILL)) // a crash
	waitClosed(t, l.rs.Done(), "the crashed session's end")
	_, err := os.Stat(l.dir)
	is.True(errors.Is(err, fs.ErrNotExist)) // the folder, and both sockets in it, are gone
	agents := broker.Agents()
	is.Equal(len(agents), 1)
	is.NoErr(agents[0].Close()) // closing again does nothing: it was closed
	_, err = os.Stat(agents[0].Path())
	is.True(errors.Is(err, fs.ErrNotExist)) // nothing listens there
}
