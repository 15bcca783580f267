package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

// The credential projection: what a session's child gets of its
// hub.SessionCredentials, built in a private runtime folder before the
// child starts and torn down when it ends (every path: Stop, a crash, a
// failed start), or at once when building it fails.
//
// The child's environment starts from childEnv, which drops every ambient
// variable (SSH_AUTH_SOCK, GIT_*, GH_TOKEN, NETRC, ...), and gets:
//
//	GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=<folder>/gitconfig
//	    the user's system and global config, flattened, without a setting
//	    that carries a credential (gitconfig.go)
//	GIT_CONFIG_COUNT, _KEY_n, _VALUE_n
//	    Wharf's own settings (credential helpers, signing), given as
//	    command-line settings so that a repository's config cannot
//	    override them: git reads them last
//	GIT_SSH_COMMAND='<ssh>' -F '<folder>/ssh_config', GIT_SSH_VARIANT=ssh
//	    each SSH key offered to its own host only (sshconfig.go)
//	SSH_AUTH_SOCK=<folder>/agent.sock
//	    when an SSH key is lent: the session's own agent, served by the
//	    broker in the Hub, following lock and unassign at once
//	WHARF_SESSION_CREDENTIALS=<folder>
//	    where `wharf git-credential` and `wharf gpg` find the credential
//	    socket (cred.sock, credproto.go) and the signing key's public half
//	PATH=<folder>/bin:...
//	    bin/git runs the Hub's git with HOME=<folder>/git-home: git's HTTP
//	    transport (libcurl) reads $HOME/.netrc, and no variable turns that
//	    off, so git must not see the user's home; `~/` in the user's
//	    config is expanded beforehand. Other programs keep the real HOME.
//	GNUPGHOME, GH_CONFIG_DIR, GLAB_CONFIG_DIR
//	    empty private folders, so gpg, gh and glab find none of the
//	    user's keys or logins; gh and glab also get their token
//	    (clitokens.go), the one secret a session's environment holds.
//
// The folder holds public halves only (key files, config files, scripts
// naming paths); tokens and signatures cross the credential socket, one
// request at a time, checked live by the broker.

// Names in a session's runtime folder.
const (
	agentSockName = "agent.sock"
	credSockName  = "cred.sock"
	// longestSocketName is the longest socket name in the folder; New
	// checks that the folder's sockets fit.
	longestSocketName = agentSockName
)

// CredentialsEnv names the variable that holds a session's runtime
// folder, for `wharf git-credential`, `wharf gpg` and the session itself.
const CredentialsEnv = childproto.CredentialsEnv

// projection is one session's projected credentials.
type projection struct {
	dir   string
	env   []string // added to the child's environment
	path  string   // prepended to the child's PATH; "" for none
	agent hub.CredentialAgent
	creds *credServer
	log   *slog.Logger
}

// projectionDir is the runtime folder of workspace id's session: the
// socket's hash, without ".sock", beside it in the private RuntimeDir.
func (b *Backend) projectionDir(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(b.opts.RuntimeDir, hex.EncodeToString(sum[:6]))
}

// project builds the projection of spec into a fresh runtime folder. On
// failure nothing of it is left: no folder, no agent, no socket.
func (b *Backend) project(ctx context.Context, spec hub.WorkspaceSessionSpec, base []string) (_ *projection, err error) {
	p := &projection{dir: b.projectionDir(spec.WorkspaceID), log: b.log.With("workspace", spec.WorkspaceID)}
	// A folder left by a Hub that died is this workspace's, and stale:
	// reserve has made sure no session of it runs here.
	if err := os.RemoveAll(p.dir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	c := spec.Credentials
	for _, d := range []string{"git-home", "gnupg"} {
		if err := os.Mkdir(filepath.Join(p.dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	missing, err := p.writeScript("missing-tool", "echo 'wharf: a credential tool this needs is not available to the session' >&2\nexit 127\n")
	if err != nil {
		return nil, err
	}
	gitconfig := filepath.Join(p.dir, "gitconfig")
	if err := os.WriteFile(gitconfig, userGitConfig(ctx, c.Tools[hub.ToolGit], base, p.log), 0o600); err != nil {
		return nil, err
	}
	p.env = append(p.env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+gitconfig,
		"GNUPGHOME="+filepath.Join(p.dir, "gnupg"))
	if git := c.Tools[hub.ToolGit]; git != "" {
		if err := os.Mkdir(filepath.Join(p.dir, "bin"), 0o700); err != nil {
			return nil, err
		}
		script := fmt.Sprintf("HOME=%s\nexport HOME\nexec %s \"$@\"\n", shellQuote(filepath.Join(p.dir, "git-home")), shellQuote(git))
		if _, err := p.writeScript(filepath.Join("bin", "git"), script); err != nil {
			return nil, err
		}
		p.path = filepath.Join(p.dir, "bin")
	}
	cli, err := cliEnv(p.dir, c.CLITokens)
	if err != nil {
		return nil, err
	}
	p.env = append(p.env, cli...)

	if c.Broker != nil {
		p.env = append(p.env, CredentialsEnv+"="+p.dir)
		if p.creds, err = serveCredentials(filepath.Join(p.dir, credSockName), c.Broker, p.log); err != nil {
			return nil, err
		}
	}
	lendsSSH := c.Signing != nil && c.Signing.Type == hub.CredentialSSH
	var logins []sshLogin
	for i, l := range c.Logins {
		if l.Type != hub.CredentialSSH {
			continue
		}
		lendsSSH = true
		file := filepath.Join(p.dir, fmt.Sprintf("login%d.pub", i))
		if err := os.WriteFile(file, []byte(l.PublicKey+"\n"), 0o600); err != nil {
			return nil, err
		}
		logins = append(logins, sshLogin{host: l.Host, keyFile: file})
	}
	agentSock := filepath.Join(p.dir, agentSockName)
	if lendsSSH {
		if c.Broker == nil {
			return nil, errors.New("SSH keys are lent without a broker")
		}
		if p.agent, err = c.Broker.ServeAgent(agentSock); err != nil {
			return nil, err
		}
		p.env = append(p.env, "SSH_AUTH_SOCK="+agentSock)
	}
	sshCfg := filepath.Join(p.dir, "ssh_config")
	if err := os.WriteFile(sshCfg, sshConfig(logins, agentSock), 0o600); err != nil {
		return nil, err
	}
	sshCmd := shellQuote(missing) + " ssh"
	if ssh := c.Tools[hub.ToolSSH]; ssh != "" {
		sshCmd = shellQuote(ssh) + " -F " + shellQuote(sshCfg)
	}
	p.env = append(p.env, "GIT_SSH_COMMAND="+sshCmd, "GIT_SSH_VARIANT=ssh")

	managed, err := p.managedConfig(c, b.opts.Command, missing)
	if err != nil {
		return nil, err
	}
	p.env = append(p.env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(managed)))
	for i, s := range managed {
		p.env = append(p.env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, s[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, s[1]))
	}
	return p, nil
}

// managedConfig writes the signing files and returns Wharf's own git
// settings: no credential helper but the session's, one per HTTPS login,
// and signing as the signing default says (none: commits are not signed).
func (p *projection) managedConfig(c hub.SessionCredentials, wharf []string, missing string) ([][2]string, error) {
	self := make([]string, len(wharf))
	for i, a := range wharf {
		self[i] = shellQuote(a)
	}
	out := [][2]string{{"credential.helper", ""}}
	for _, l := range c.Logins {
		if l.HTTPS && l.Type == hub.CredentialToken {
			out = append(out, [2]string{"credential.https://" + l.Host + ".helper", "!" + strings.Join(self, " ") + " git-credential"})
		}
	}
	out = append(out, [2]string{"tag.gpgsign", "false"})
	s := c.Signing
	switch {
	case s == nil:
		return append(out, [2]string{"commit.gpgsign", "false"}), nil
	case s.Type == hub.CredentialSSH:
		pub := filepath.Join(p.dir, childproto.SigningSSHKeyFile)
		if err := os.WriteFile(pub, []byte(s.PublicKey+"\n"), 0o600); err != nil {
			return nil, err
		}
		program := missing
		if kg := c.Tools[hub.ToolSSHKeygen]; kg != "" {
			program = kg
		}
		return append(out, [2]string{"commit.gpgsign", "true"}, [2]string{"gpg.format", "ssh"},
			[2]string{"user.signingkey", pub}, [2]string{"gpg.ssh.program", program}), nil
	case s.Type == hub.CredentialOpenPGP:
		if err := os.WriteFile(filepath.Join(p.dir, signingKeyFile), []byte(s.PublicKey), 0o600); err != nil {
			return nil, err
		}
		program, err := p.writeScript("gpg", "exec "+strings.Join(self, " ")+" gpg \"$@\"\n")
		if err != nil {
			return nil, err
		}
		return append(out, [2]string{"commit.gpgsign", "true"}, [2]string{"gpg.format", "openpgp"},
			[2]string{"user.signingkey", s.Fingerprint}, [2]string{"gpg.program", program},
			[2]string{"gpg.openpgp.program", program}), nil
	}
	return nil, fmt.Errorf("a signing credential of type %q", s.Type)
}

// signingKeyFile holds the OpenPGP signing key's public half in the
// runtime folder, for `wharf gpg --verify`.
const signingKeyFile = childproto.SigningOpenPGPKeyFile

// writeScript writes an executable shell script (0700) into the folder.
func (p *projection) writeScript(name, body string) (string, error) {
	path := filepath.Join(p.dir, name)
	text := "#!/bin/sh\n# Made by Wharf for one workspace session; removed when it ends.\n" + body
	return path, os.WriteFile(path, []byte(text), 0o700)
}

// apply returns the child's environment: childEnv of base, with the
// projection's folder first on PATH and its variables added.
func (p *projection) apply(base []string) []string {
	env := childEnv(base)
	if p.path != "" {
		found := false
		for i, kv := range env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				env[i], found = "PATH="+p.path+string(os.PathListSeparator)+v, true
			}
		}
		if !found {
			env = append(env, "PATH="+p.path)
		}
	}
	return append(env, p.env...)
}

// close ends what serves the session (its agent, its credential socket)
// and removes the folder. It is called once the child is gone, or when
// building the projection failed; a second call does nothing.
func (p *projection) close() {
	if p.agent != nil {
		if err := p.agent.Close(); err != nil {
			p.log.Warn("the session's agent did not close cleanly", "err", err)
		}
		p.agent = nil
	}
	if p.creds != nil {
		p.creds.close()
		p.creds = nil
	}
	if p.dir != "" {
		if err := os.RemoveAll(p.dir); err != nil {
			p.log.Warn("the session's runtime folder could not be removed", "err", err)
		}
		p.dir = ""
	}
}

// shellQuote quotes s for a POSIX shell: in single quotes, each single
// quote closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
