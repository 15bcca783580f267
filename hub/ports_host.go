package hub

import "context"

// The hosts port: reaching the other machines workspaces live on (host.go).

// HostStore holds the configured hosts. Returned values are copies owned
// by the caller.
type HostStore interface {
	// Hosts returns every host, sorted by name.
	Hosts() ([]Host, error)
	// Host returns the host with exactly this name, or a NotFound error.
	Host(name string) (Host, error)
	// CreateHost adds h (CheckHostName, CheckDestination first). A host of
	// the same name is a Conflict error.
	CreateHost(h Host) error
	// DeleteHost removes the named host (NotFound if absent). The core
	// refuses first when a workspace lives on it; the store does not look.
	DeleteHost(name string) error
}

// HostConnector reaches configured hosts: one HostPlace per host.
type HostConnector interface {
	// Connect returns the place of h without touching the network: it
	// connects on first use. The core calls it once per host and
	// destination, and closes the place when the host is removed or its
	// destination changes.
	Connect(h Host) (HostPlace, error)
}

// SessionReaper is implemented by a HostPlace whose sessions may outlive
// the Hub that started them (a host kept running while the Hub died or
// lost its connection). Reap ends every session there the place did not
// start itself, and removes what they left; it returns what it reaped,
// for the log. A restarted Hub calls it once per host holding workspaces,
// before it starts any session there.
type SessionReaper interface {
	Reap(ctx context.Context) ([]string, error)
}

// SessionAdopter is implemented by a HostPlace whose sessions outlive
// the Hub that started them for a grace, so a restarted Hub loses no work
// there. The core detaches (SessionDetacher) instead of stopping them
// when it closes, and adopts them when it starts again, before it reaps
// the rest; a session not adopted within the grace ends by itself.
type SessionAdopter interface {
	// Adopt returns the session of spec that an earlier Hub started and
	// left running, held anew and lent spec's credentials, as Start would
	// return it. NotFound when there is none to adopt: none runs, it runs
	// another build, or it already belongs to this Hub; nothing changes
	// on the host then. Other errors are Start's.
	Adopt(ctx context.Context, spec WorkspaceSessionSpec) (WorkspaceSession, error)
}

// SessionDetacher is implemented by a WorkspaceSession that can be let go
// of without ending it (SessionAdopter).
type SessionDetacher interface {
	// Detach lets go of the session: it keeps running where it runs, for
	// its backend's grace, and Done closes once this Hub holds nothing of
	// it. Detaching an ended session is a no-op.
	Detach()
}

// HostPlace is one host, as the core uses it: the backend that runs its
// workspaces' sessions, and its file system and git, on which the core's
// folder and repository operations of those workspaces run. Methods are
// safe for concurrent use.
type HostPlace interface {
	// Backend's Name is HostBackend of the host's name.
	Backend
	// FS is the host's file system: paths are paths on the host.
	FS() FS
	// Git runs git on the host: Inspect, Init, Clone (its credentials
	// lent from the Hub, as a session's are) and the worktree methods.
	// A Fetch lent credentials may be refused (Invalid): the core then
	// says where to fetch instead.
	Git() GitRunner
	// Check reaches the host now, connecting when not connected, and
	// confirms that workspaces can run there. A failure is an
	// Unavailable error whose public message says why in the user's
	// terms (an unknown or changed host key, a refused login, an
	// unreachable host, another operating system or architecture),
	// never a secret.
	Check(ctx context.Context) error
	// Close ends the connection to the host; sessions still held there
	// end with it (a place that adopts lets them run on for its grace,
	// for the next Hub). Calls after Close fail.
	Close() error
}
