package hostop

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// What the client refuses: clones and the worktree family run on the
// Hub's machine only (they are lent credentials, or make what the Hub's
// journals track there). The core refuses them for a workspace on a host
// before it asks; these answers keep the port's contract if it ever did.

var errClone = hub.Errorf(hub.Invalid, "cloning onto another machine is not supported yet")

var errWorktrees = hub.Errorf(hub.Invalid, "worktrees of a workspace on another machine are not supported yet")

// Clone is refused.
func (c *Client) Clone(context.Context, hub.CloneRequest) (hub.CloneRun, error) { return nil, errClone }

// ListWorktrees is refused.
func (c *Client) ListWorktrees(context.Context, string) (hub.WorktreeListing, error) {
	return hub.WorktreeListing{}, errWorktrees
}

// Refs is refused.
func (c *Client) Refs(context.Context, string) (local, remote []string, err error) {
	return nil, nil, errWorktrees
}

// AddWorktree is refused.
func (c *Client) AddWorktree(context.Context, hub.AddWorktreeRequest) error { return errWorktrees }

// CheckOutWorktree is refused.
func (c *Client) CheckOutWorktree(context.Context, string) error { return errWorktrees }

// ReadStamp is refused.
func (c *Client) ReadStamp(context.Context, string) (string, error) { return "", errWorktrees }

// WriteStamp is refused.
func (c *Client) WriteStamp(context.Context, string, string) error { return errWorktrees }

// InspectTree is refused.
func (c *Client) InspectTree(context.Context, string) (hub.TreeFacts, error) {
	return hub.TreeFacts{}, errWorktrees
}

// RemoveWorktree is refused.
func (c *Client) RemoveWorktree(context.Context, string, string, bool) error { return errWorktrees }

// DiscardWorktree is refused.
func (c *Client) DiscardWorktree(context.Context, string, string) error { return errWorktrees }

// Fetch is refused: it would lend the session's credentials across.
func (c *Client) Fetch(context.Context, string, hub.SessionCredentials) error { return errWorktrees }
