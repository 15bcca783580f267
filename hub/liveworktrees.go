package hub

import "context"

// announceWorktrees tells worktrees subscribers that the worktree inventory
// of the affected workspaces' repositories may have changed: subscribers of
// an affected workspace, and of every workspace in the same repository
// (a main checkout and its linked worktrees share one common Git
// directory). Called after a committed registration, forget, or folder
// rename or removal; it costs nothing when nobody follows the topic.
func (h *Hub) announceWorktrees(ctx context.Context, affected ...Workspace) {
	followed := h.live.worktreeFollowed()
	if len(followed) == 0 {
		return
	}
	ids := map[string]bool{}
	repos := map[string]bool{}
	for _, w := range affected {
		ids[w.ID] = true
		if f := h.folder(ctx, w.Path); f.repo.CommonDir != "" {
			repos[f.repo.CommonDir] = true
		}
	}
	reg, err := h.registry(ctx)
	if err != nil {
		reg = nil // announce to the affected workspaces only
	}
	var notify []string
	for _, w := range reg {
		if !followed[w.ID] {
			continue
		}
		if ids[w.ID] || repos[h.folder(ctx, w.Path).repo.CommonDir] {
			notify = append(notify, w.ID)
			delete(ids, w.ID)
		}
	}
	for id := range ids {
		if followed[id] {
			notify = append(notify, id) // no longer registered: forgotten or removed
		}
	}
	h.invalidateWorktrees(notify...)
}

// worktreeFollowed returns the workspaces whose worktrees topic has a
// subscriber.
func (b *liveBroker) worktreeFollowed() map[string]bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]bool, len(b.worktrees))
	for id := range b.worktrees {
		out[id] = true
	}
	return out
}
