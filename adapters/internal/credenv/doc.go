// Package credenv is the credential projection: what a child process —
// a workspace session (adapters/local) or a clone's git
// (adapters/gitexec) — gets of its hub.SessionCredentials, built in a
// private folder before the child starts and torn down when it ends
// (every path: a stop, a crash, a failed start), or at once when
// building it fails. Both adapters need the same projection, and
// adapters never import each other, so it lives here; the protocol of
// its credential socket (credproto.go), the socket's server
// (credsocket.go) and its client, `wharf git-credential` and `wharf
// gpg`'s request (gitcredential.go), with it.
//
// The child's environment starts from AgentEnv, which drops every ambient
// variable (SSH_AUTH_SOCK, GIT_*, GH_TOKEN, NETRC, API keys, ...) but the
// basics and the paths by which coding agents find their own stores
// (the Hub's agent-login runtimes run in the same, so a login made on
// the Hub is the one a session's agent reads), and gets:
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
//
// A clone (Options.NoUserConfig) gets the same folder and variables with
// an empty global config, so git runs with Wharf's settings alone; its
// caller gives Config to git as command-line settings and takes Vars
// without Apply's filtering, which gitcmd does its own way.
package credenv
