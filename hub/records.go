package hub

import "time"

// Workspace is a registered folder whose session the Hub starts and stops.
type Workspace struct {
	// ID is stable and never reused, derived from the folder name when the
	// workspace is registered (see mintID).
	ID string
	// Path is the folder, absolute and canonical. A folder rename through
	// the Hub updates it; the id stays.
	Path string
	// DisplayName is trimmed, 1-64 visible characters, not unique.
	DisplayName string
	// Backend names the Backend that runs the session ("local").
	Backend string
	// AutoStart records that the session was running when the Hub last
	// stopped, so it is started again when the Hub starts.
	AutoStart    bool
	RegisteredAt time.Time
}

// JournalKind says what change a Journal guards.
type JournalKind string

// The journal kinds.
const (
	JournalOnboarding   JournalKind = "onboarding"
	JournalFolderRename JournalKind = "folder-rename"
	JournalFolderRemove JournalKind = "folder-remove"
	// JournalForget guards the removal of a forgotten workspace's data
	// (Backend.RemoveWorkspaceData): it commits with the workspace's
	// removal from the registry and is deleted once the data is gone.
	JournalForget JournalKind = "workspace-forget"
	// JournalWorktreeCreate guards a linked tree being made, from before
	// `git worktree add` until it is stamped and registered;
	// JournalWorktreeDelete a linked tree being removed, until it is
	// unregistered.
	JournalWorktreeCreate JournalKind = "worktree-create"
	JournalWorktreeDelete JournalKind = "worktree-delete"
)

// Journal is a recovery journal: the intent of a change that touches the
// disk, stored before the disk is touched. Data is the core's own encoding
// of the intent; the store keeps it verbatim.
type Journal struct {
	ID        int64
	Kind      JournalKind
	Data      []byte
	CreatedAt time.Time
}

// PersonalState is what one Hub user keeps per workspace: where they were
// and how they looked at it. A nil field is unset. Version is always 1 on
// the wire; the zero value is an empty state.
type PersonalState struct {
	DocumentPath  *string
	Follow        *bool
	PreviewMode   *string
	CompareTarget *string
	FilesFilter   *string
	LastPtyID     *string
}
