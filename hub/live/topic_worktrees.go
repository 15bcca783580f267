package live

import (
	"path"

	"github.com/wharfhub/wharf/hub"
)

// The worktrees topic: content-free invalidations of a repository's
// worktree inventory. It has no upstream and no cursor: every attach is
// owed one fresh invalidation, whatever its cursor, and the Hub sends
// another whenever a committed change may have altered the inventory.

// worktreeInventory is the topic's only payload.
var worktreeInventory = []byte(`{"type":"worktree.inventory"}`)

type worktreesTopic struct {
	b    *Broker
	subs map[string]map[*attachment]struct{} // by workspace id; guarded by Broker.mu
}

func newWorktreesTopic(b *Broker) *worktreesTopic {
	return &worktreesTopic{b: b, subs: map[string]map[*attachment]struct{}{}}
}

func (*worktreesTopic) name() hub.Topic                  { return hub.TopicWorktrees }
func (*worktreesTopic) checkKey(hub.SubKey) error        { return nil }
func (*worktreesTopic) identity(k hub.SubKey) hub.SubKey { return k }
func (t *worktreesTopic) releaseLocked(a *attachment) {
	set := t.subs[a.s.ws]
	delete(set, a)
	if len(set) == 0 {
		delete(t.subs, a.s.ws)
	}
}

func (t *worktreesTopic) attachLocked(a *attachment) {
	t.b.deliverLocked(a, a.envelope(hub.EventData, "", worktreeInventory), a.envelope(hub.EventReady, "", nil))
	if t.subs[a.s.ws] == nil {
		t.subs[a.s.ws] = map[*attachment]struct{}{}
	}
	t.subs[a.s.ws][a] = struct{}{}
}

// followed returns the workspaces whose worktrees topic has a subscriber.
func (t *worktreesTopic) followed() map[string]bool {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	out := make(map[string]bool, len(t.subs))
	for id := range t.subs {
		out[id] = true
	}
	return out
}

// invalidate tells every subscriber of the workspaces ids that the
// worktree inventory may have changed.
func (t *worktreesTopic) invalidate(ids ...string) {
	b := t.b
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		for a := range t.subs[id] {
			b.deliverLocked(a, a.envelope(hub.EventData, "", worktreeInventory))
		}
	}
	b.settleLocked()
}

// Departure is where a workspace was before it moved or left the
// registry: its old path, and the common Git directory the Hub knew for
// it ("" when it knew none). Once the folder is moved or removed, git can
// no longer tell.
type Departure struct {
	Path, Repo string
}

// AnnounceWorktrees tells worktrees subscribers that the worktree inventory
// of the affected workspaces' repositories may have changed: subscribers of
// an affected workspace, and of every workspace in the same repository
// (a main checkout and its linked worktrees share one common Git
// directory). The commit path calls it after a registration, forget, or
// folder rename or removal committed, with where the moved and departed
// workspaces were: git can no longer place a folder that moved or went,
// so its repository is the one the Hub knew, or else the one of its old
// parent folder. It costs nothing when nobody follows the topic.
func (b *Broker) AnnounceWorktrees(left []Departure, affected ...hub.Workspace) {
	t := b.topic(hub.TopicWorktrees).(*worktreesTopic)
	followed := t.followed()
	if len(followed) == 0 {
		return
	}
	ids := map[string]bool{}
	repos := map[string]bool{}
	for _, d := range left {
		if d.Repo == "" && d.Path != "" {
			d.Repo = b.host.FolderRepository(path.Dir(d.Path))
		}
		if d.Repo != "" {
			repos[d.Repo] = true
		}
	}
	for _, w := range affected {
		ids[w.ID] = true
		if dir := b.host.Repository(w); dir != "" {
			repos[dir] = true
		}
	}
	var notify []string
	for _, w := range b.host.Workspaces() {
		if !followed[w.ID] {
			continue
		}
		if ids[w.ID] || repos[b.host.Repository(w)] {
			notify = append(notify, w.ID)
			delete(ids, w.ID)
		}
	}
	for id := range ids {
		if followed[id] {
			notify = append(notify, id) // no longer registered: forgotten or removed
		}
	}
	t.invalidate(notify...)
}
