// Package childrun is the Hub's side of a running workspace child
// (`wharf session`, adapters/child), whatever started it: the lifecycle
// the backends share. A backend (adapters/local for a child on the Hub's
// machine, adapters/sshhost for one on another host) spawns the process
// its own way and hands this package three things: the child's stdout
// and stderr, a Unix socket on the Hub's machine that reaches the child's
// internal HTTP endpoint (the child's own socket, or the local end of an
// SSH forward to it), and a Process that knows how to ask the child to
// end and how to end it by force.
//
// From those, Session is the hub.WorkspaceSession: it reads the
// readiness line (childproto.ReadReady) and then asks for facts before a
// start counts as done; it keeps a bounded tail of stderr for the log
// (never for an error a client sees); it speaks childproto over the
// socket for facts, feeds, notifications and agent-login changes; and
// Stop escalates from the polite end to the forced one after a bounded
// grace. The backend learns the child's end its own way (a reaped
// process, an ended ssh client), cleans up what is its own, and then
// calls Finish, which closes Done.
//
// One fresh connection serves each call: a session's connections never
// outlive it and no idle connection holds a descriptor.
package childrun
