// Package credtools implements hub.ToolProber over os/exec: it finds the
// tools credentials rely on (ssh, ssh-agent, ssh-add, ssh-keygen, gpg,
// gpgconf, git, gh, glab) and tells, by running each once, whether it is
// the tool it claims to be.
//
// # Finding
//
// An override, when the Hub has one for a tool, is the only place looked
// at: it must be an absolute path to a regular file (through symbolic
// links) the Hub may execute. One that no longer is reads as
// hub.ToolMsgOverrideStale and is never replaced by a tool found on PATH:
// the owner chose that executable, and silently running another one in
// its place is how a key ends up in a program nobody chose. Without an
// override, the tool is looked for in the Hub's PATH: its first
// MaxPathEntries absolute folders, none at all when it is longer than
// MaxPathLen.
//
// # Probing
//
// Each tool runs once with one argument (ssh -V, ssh-agent -?, ssh-add
// --help, ssh-keygen -?, the others --version), bounded (see run): the
// environment PATH, LANG=C and LC_ALL=C only, the working folder "/", no
// stdin, Options.Timeout (5 s) until it exits, 8 KiB per stream, its own
// process group killed as a whole when it ends, whichever way. The git
// probe runs no repository's settings: --version reads none, and "/" is
// nobody's work tree; git in a repository runs only through
// adapters/internal/gitcmd.
//
// # Identifying
//
// A tool is taken for what it claims only by what it prints, never by its
// exit status alone (the earlier system accepted /bin/false), and by a
// whole line read from its start, never a phrase found anywhere (it also
// accepted "this is not OpenSSH"): a versioned tool's first line is its
// version line ("OpenSSH_9.2p1 …", "gpg (GnuPG) 2.2.40", "git version
// 2.39.5", "gh version 2.45.0 …", "glab 1.46.1 …", the CLIs at least gh
// 2.0 and glab 1.22) and needs exit status 0; a usage tool (ssh-agent,
// ssh-add, ssh-keygen, which have no version option) prints a line
// "usage: <tool> [", or, for ssh-add without an agent, which a probe
// never has, exactly the line "Could not open a connection to your
// authentication agent.", and may exit 0, 1 or 2. The version reported
// is the first non-empty line, without control or format characters,
// at most 160 characters; a usage tool reports none.
package credtools
