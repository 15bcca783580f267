package worktree

import "github.com/wharfhub/wharf/hub"

// Resolve finds the checkout a reference names among a repository's
// checkouts: a registered workspace's id, a checkout id, or the exact
// branch of exactly one linked (non-main) checkout, tried in that order.
// A path is never a reference. Every check after it runs on the
// checkout it resolved to.
func Resolve(ref string, checkouts []hub.WorktreeCheckout) (hub.WorktreeCheckout, *hub.WorktreeError) {
	if ref != "" {
		for _, c := range checkouts {
			if c.Registered && c.WorkspaceID == ref {
				return c, nil
			}
		}
		for _, c := range checkouts {
			if c.CheckoutID == ref {
				return c, nil
			}
		}
		var found []hub.WorktreeCheckout
		for _, c := range checkouts {
			if !c.Main && c.Branch == ref {
				found = append(found, c)
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 0:
		default:
			return hub.WorktreeCheckout{}, hub.WorktreeRefusal(hub.WTConflict,
				"More than one worktree has this branch. Name the workspace id instead.").WithRetry(hub.WTRetryRefresh)
		}
	}
	return hub.WorktreeCheckout{}, hub.WorktreeRefusal(hub.WTNotFound,
		"No worktree of this repository goes by that name.").WithRetry(hub.WTRetryRefresh)
}
