package service

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// worktreeChanged is a provenance record written or deleted: the
// inventory of main's repository changed (a tree became, or stopped
// being, the Hub's), so its worktrees topic is told. The state answer
// does not show provenance, so the revision stays.
type worktreeChanged struct{ main hub.Workspace }

// worktreeTreesSeen is an inventory read that changed what the state
// shows of a linked worktree (its ownership, where it came from, whether
// another checkout replaced it): the state's revision advances.
type worktreeTreesSeen struct{}

func (worktreeTreesSeen) apply(*Hub) (took, shown bool)               { return true, true }
func (worktreeTreesSeen) publish(context.Context, *Hub, *publication) {}

func (worktreeChanged) apply(*Hub) (took, shown bool) { return true, false }

func (c worktreeChanged) publish(_ context.Context, _ *Hub, pub *publication) {
	if c.main.ID != "" {
		pub.touched = append(pub.touched, c.main)
	}
}
