package credenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// Names in a projection's folder.
const (
	agentSockName = "agent.sock"
	credSockName  = "cred.sock"
	// LongestSocketName is the longest socket name in the folder: the
	// caller checks that the folder's sockets fit a Unix socket path.
	LongestSocketName = agentSockName
)

// CredentialsEnv names the variable that holds a session's runtime
// folder, for `wharf git-credential`, `wharf gpg` and the session itself.
const CredentialsEnv = childproto.CredentialsEnv

// Options say what to project where.
type Options struct {
	// Dir is the projection's folder, made 0700 by Build; its parent
	// must be private. What is there already is stale (a Hub that died
	// left it) and is removed first: the caller makes sure nothing that
	// uses it runs.
	Dir string
	// Credentials are what is lent.
	Credentials hub.SessionCredentials
	// Command runs Wharf itself, as `git-credential` and `gpg`: git's
	// credential helper and signing program ask the Hub through it.
	Command []string
	// Base is the environment the user's git config is read in (HOME,
	// XDG_CONFIG_HOME) and that Apply filters.
	Base []string
	// NoUserConfig leaves the user's git config out: the global config
	// file is empty, so git runs with Wharf's settings alone (a clone).
	NoUserConfig bool
	// KnownHosts, when set, is the known_hosts file ssh looks up host
	// keys in and records those a person confirms; "" leaves ssh's own,
	// the account's ~/.ssh/known_hosts (found through the user database,
	// not HOME), so a host confirmed once is known to the user's own ssh
	// and to every session.
	KnownHosts string
	// Log receives what goes wrong (never a secret); nil discards.
	Log *slog.Logger
}

// Projection is a built projection: a folder, the servers that answer
// from it (an agent, a credential socket) and the variables that point
// a child at them. Close it once the child and its group are gone.
type Projection struct {
	dir    string
	env    []string         // added to the child's environment
	config []gitcmd.Setting // Wharf's own git settings, given as GIT_CONFIG_*
	path   string           // prepended to the child's PATH; "" for none
	agent  hub.CredentialAgent
	creds  *credServer
	log    *slog.Logger
}

// CheckDir refuses a folder whose path the generated ssh_config cannot
// name safely: ssh expands ${VAR} in its paths, and a line break would
// end a line of it. Build checks its folder; a caller may check the
// folder it makes them in early, to fail at its start.
func CheckDir(dir string) error {
	if strings.Contains(dir, "${") || strings.ContainsFunc(dir, unicode.IsControl) {
		return fmt.Errorf("the folder %q holds \"${\" or a control character, which ssh_config cannot name", dir)
	}
	return nil
}

// Build builds the projection of opts.Credentials into a fresh folder
// opts.Dir. On failure nothing of it is left: no folder, no agent, no
// socket.
func Build(ctx context.Context, opts Options) (_ *Projection, err error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := CheckDir(opts.Dir); err != nil {
		return nil, err
	}
	p := &Projection{dir: opts.Dir, log: log}
	if err := os.RemoveAll(p.dir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(p.dir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	c := opts.Credentials
	base := opts.Base
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
	var userConfig []byte
	if !opts.NoUserConfig {
		userConfig = userGitConfig(ctx, c.Tools[hub.ToolGit], base, p.log)
	}
	if err := os.WriteFile(gitconfig, userConfig, 0o600); err != nil {
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
	if err := os.WriteFile(sshCfg, sshConfig(logins, agentSock, opts.KnownHosts), 0o600); err != nil {
		return nil, err
	}
	sshCmd := shellQuote(missing) + " ssh"
	if ssh := c.Tools[hub.ToolSSH]; ssh != "" {
		sshCmd = shellQuote(ssh) + " -F " + shellQuote(sshCfg)
	}
	p.env = append(p.env, "GIT_SSH_COMMAND="+sshCmd, "GIT_SSH_VARIANT=ssh")

	if p.config, err = p.managedConfig(c, opts.Command, missing); err != nil {
		return nil, err
	}
	return p, nil
}

// managedConfig writes the signing files and returns Wharf's own git
// settings: no credential helper but the session's, one per HTTPS login,
// and signing as the signing default says (none: commits are not signed).
func (p *Projection) managedConfig(c hub.SessionCredentials, wharf []string, missing string) ([]gitcmd.Setting, error) {
	self := make([]string, len(wharf))
	for i, a := range wharf {
		self[i] = shellQuote(a)
	}
	out := []gitcmd.Setting{set("credential.helper", "")}
	for _, l := range c.Logins {
		if l.HTTPS && l.Type == hub.CredentialToken {
			out = append(out, set("credential.https://"+l.Host+".helper", "!"+strings.Join(self, " ")+" git-credential"))
		}
	}
	out = append(out, set("tag.gpgsign", "false"))
	s := c.Signing
	switch {
	case s == nil:
		return append(out, set("commit.gpgsign", "false")), nil
	case s.Type == hub.CredentialSSH:
		pub := filepath.Join(p.dir, childproto.SigningSSHKeyFile)
		if err := os.WriteFile(pub, []byte(s.PublicKey+"\n"), 0o600); err != nil {
			return nil, err
		}
		program := missing
		if kg := c.Tools[hub.ToolSSHKeygen]; kg != "" {
			program = kg
		}
		return append(out, set("commit.gpgsign", "true"), set("gpg.format", "ssh"),
			set("user.signingkey", pub), set("gpg.ssh.program", program)), nil
	case s.Type == hub.CredentialOpenPGP:
		if err := os.WriteFile(filepath.Join(p.dir, SigningKeyFile), []byte(s.PublicKey), 0o600); err != nil {
			return nil, err
		}
		program, err := p.writeScript("gpg", "exec "+strings.Join(self, " ")+" gpg \"$@\"\n")
		if err != nil {
			return nil, err
		}
		return append(out, set("commit.gpgsign", "true"), set("gpg.format", "openpgp"),
			set("user.signingkey", s.Fingerprint), set("gpg.program", program),
			set("gpg.openpgp.program", program)), nil
	}
	return nil, fmt.Errorf("a signing credential of type %q", s.Type)
}

// SigningKeyFile holds the OpenPGP signing key's public half in the
// runtime folder, for `wharf gpg --verify`.
const SigningKeyFile = childproto.SigningOpenPGPKeyFile

// writeScript writes an executable shell script (0700) into the folder.
func (p *Projection) writeScript(name, body string) (string, error) {
	path := filepath.Join(p.dir, name)
	text := "#!/bin/sh\n# Made by Wharf for one workspace session; removed when it ends.\n" + body
	return path, os.WriteFile(path, []byte(text), 0o700)
}

// Dir is the projection's folder.
func (p *Projection) Dir() string { return p.dir }

// Vars are the variables the projection sets (its folders, sockets, the
// SSH command, the CLIs' tokens), without Wharf's git settings (Config)
// and PATH.
func (p *Projection) Vars() []string { return p.env }

// Config is Wharf's own git settings: no credential helper but the
// projection's, one per HTTPS login, and signing as lent. A child gets
// them as command-line settings (GIT_CONFIG_COUNT), which a repository's
// config cannot override.
func (p *Projection) Config() []gitcmd.Setting { return p.config }

// Apply returns a child's environment: base filtered to what a child may
// inherit (AgentEnv), the projection's folder first on PATH, its Vars
// and its Config as GIT_CONFIG_* variables.
func (p *Projection) Apply(base []string) []string {
	env := AgentEnv(base)
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
	env = append(env, p.env...)
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(p.config)))
	for i, s := range p.config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, s.Key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, s.Value))
	}
	return env
}

// Close ends what serves the projection (its agent, its credential
// socket) and removes the folder. It is called once the child is gone,
// or when building the projection failed; a second call does nothing.
func (p *Projection) Close() {
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

// set is one of Wharf's git settings.
func set(key, value string) gitcmd.Setting { return gitcmd.Setting{Key: key, Value: value} }
