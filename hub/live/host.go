package live

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// Host is what the broker needs of the Hub service: the registry, the
// running sessions, device sessions, repositories, and the commit path
// for the activity marks. The broker holds no other way to the service.
// Its methods are safe for concurrent use. Those the broker calls with its
// own lock held (said below) never wait on a port nor call the broker.
type Host interface {
	// Registered reports whether workspace ws is registered, reading the
	// registry from the store when the Hub does not hold it; the error is
	// the store's.
	Registered(ctx context.Context, ws string) (bool, error)
	// Workspaces returns the registry as the Hub last knew it, never
	// reading the store; the broker must not modify it. Called with the
	// broker's lock held.
	Workspaces() []hub.Workspace
	// WorkspaceSession returns the running session of workspace ws, or
	// nil when none runs (a session whose child has ended is not running,
	// even before the Hub has noticed). Called with the broker's lock
	// held.
	WorkspaceSession(ws string) hub.WorkspaceSession
	// DeviceSessionActive reports whether the device session with digest
	// d is still active. A failure to tell (a store hiccup) counts as
	// active, so it does not end every stream.
	DeviceSessionActive(ctx context.Context, d hub.DeviceSessionDigest) bool
	// Repository returns the common Git directory of workspace w's
	// repository, "" when it has none or git cannot tell. It may ask git,
	// within a bound of the Hub's.
	Repository(w hub.Workspace) string
	// FolderRepository returns the common Git directory of the
	// repository folder dir is in, "" when none or unknown (dir may be
	// gone). It may ask git, within a bound of the Hub's.
	FolderRepository(dir string) string
	// CommitMarks writes a change of the activity marks through the Hub's
	// commit path: fn's writes commit together, or not at all when fn or
	// the store fails (the error is theirs). fn must not call the broker.
	CommitMarks(ctx context.Context, fn func(MarkWrites) error) error
}

// MarkWrites are the writes of the stored activity marks (the marks
// behind `finished`, which outlive a restart), with the contracts of
// hub.ActivityStore's methods of the same names.
type MarkWrites interface {
	PutActivityMark(m hub.ActivityMark) error
	DeleteActivityMark(workspaceID, user string) error
	DeleteActivityMarks(workspaceID string) error
}
