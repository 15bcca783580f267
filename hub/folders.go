package hub

// BrowseResult lists the child directories of one directory.
type BrowseResult struct {
	Path   string // as requested, cleaned
	Parent string // "" at the root
	Dirs   []BrowseEntry
}

// BrowseEntry is one child directory.
type BrowseEntry struct {
	Name         string
	Git          bool   // it holds a .git entry (a repository or a linked worktree)
	RegisteredID string // the workspace registered exactly there, or ""
	DisplayName  string // that workspace's display name, or ""
	Running      bool
}

// RenameResult is the outcome of RenameFolder.
type RenameResult struct {
	Path         string   // the new path
	WorkspaceIDs []string // workspaces whose paths followed, in registration order
}

// RemoveResult is the outcome of RemoveFolder.
type RemoveResult struct {
	Path        string
	WorkspaceID string // the workspace registered there and now forgotten, or ""
}
