// Package sshhost is the Backend of one configured host ("ssh:NAME"):
// workspace sessions run on another machine, reached through the
// system's OpenSSH client only (os/exec; no key handling of its own, so
// the Hub user's ~/.ssh/config, agent, jump hosts and known_hosts apply).
//
// A host's ControlMaster lives in the Hub's private runtime directory
// (RuntimeDir/cm-<hash of the name>), started with BatchMode (never a
// prompt) and StrictHostKeyChecking=yes: an unknown or changed host key
// is refused with a clear error and never accepted. Everything else is a
// client of a master. Sessions past what one connection carries (sshd's
// MaxSessions) go on further masters beside it (masters.go), each one
// login; nothing else authenticates again.
//
// The Hub's own executable is copied to the host, by content hash, to
// RemoteRoot/bin/<sha256>/wharf (streamed, verified remotely, then
// renamed into place) and reused while present: the session protocol is
// private to one build, so the host runs exactly this build. A host whose
// operating system or architecture differ from the Hub's is refused.
//
// A session is `wharf session` started over the master. sshd makes every
// command the leader of a new session and process group, so the child's
// pid, which its start script prints first, names the group a forced stop
// kills. Its socket lives in a private (0700) remote runtime directory
// and is forwarded back (`ssh -O forward -L`) to a Unix socket in
// RuntimeDir before the child starts, so the Hub reaches a remote
// session exactly as a local one: adapters/internal/childrun drives both.
// The child's stdin is the ssh channel: closing it is the polite stop,
// and a Hub that dies closes it too. The forced stop kills the remote
// group over the master. Either way the forward is cancelled and the
// sockets on both ends and the pid file are removed; nothing is left on
// the host but the cached binary and the workspaces' data directories.
//
// Credentials stay on the Hub (credentials.go): the session's agent and
// credential sockets are served on the Hub and forwarded into its
// private runtime folder on the host; its variables cross the channel.
//
// Failures: ServerAliveInterval 15 × ServerAliveCountMax 3 makes the
// master notice a dead link within 45 s; meanwhile facts and feeds are
// unavailable. The master then exits, every session's channel ends, and
// each session ends (Done) with the lost connection logged. A Hub that
// dies closes its sessions' stdin, so they end too; Reap ends what a Hub
// left behind when that could not reach the host.
//
// Remote commands never run a program a repository names: the only
// programs are POSIX sh with fixed scripts, uname, the copied binary,
// kill, rm and mkdir, with every argument passed as a quoted positional
// parameter of the script.
package sshhost
