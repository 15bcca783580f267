package service

import (
	"context"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
	"github.com/wharfhub/wharf/hub/worktree"
)

// hubState is what the state answer is built from, in memory, and the
// snapshot last built from it.
//
// The registry is read from the store once and then kept up to date by
// the commit path (a Hub is the only writer of workspaces and settings in
// its store; `wharf user` touches users and device sessions only). Facts
// that cost a git process or a call to a child (a folder's repository, a
// session's shells) are kept per workspace and refreshed in the
// background once FactsTTL has passed, so a state answer never waits for
// git or a child once it has seen a workspace.
type hubState struct {
	h *Hub

	mu     sync.Mutex
	loaded bool                      // ws and parent are the store's registry
	gen    uint64                    // bumped by every change while not loaded
	ws     []hub.Workspace           // registration order; replaced on change, never modified in place
	parent string                    // the configured default parent, "" when none
	facts  map[string]workspaceFacts // by workspace id

	rev        atomic.Uint64 // bumped by every change a state answer may show
	snap       atomic.Pointer[hub.HubState]
	build      sync.Mutex     // one snapshot built at a time
	stale      atomic.Bool    // FactsTTL has passed since the facts were last refreshed
	refreshing atomic.Bool    // a background refresh of the facts runs
	ttl        hub.Timer      // sets stale; guarded by mu
	closed     bool           // no refresh starts any more; guarded by mu
	background sync.WaitGroup // refreshes, waited for by Close
	// shellsOwed holds the workspaces whose session facts are being read
	// again because their shells moved (hubfacts.go), true when the read
	// must run once more; guarded by mu.
	shellsOwed map[string]bool
	// changed is closed and replaced whenever rev advances through the
	// commit path (bumped); guarded by mu.
	changed chan struct{}
}

// State returns the Hub's state as the caller sees it: the current
// snapshot, built afresh when something changed.
func (h *Hub) State(ctx context.Context, caller hub.DeviceSession) (*hub.HubState, error) {
	if s := h.st.snap.Load(); s != nil && s.WorkspacesRevision == h.st.rev.Load() {
		if h.st.stale.Load() {
			h.st.refreshInBackground()
		}
		return s, nil
	}
	return h.st.rebuild(ctx)
}

// Workspaces lists every registered workspace as it is now, in
// registration order. The slice is shared: callers must not modify it.
func (h *Hub) Workspaces(ctx context.Context) ([]hub.WorkspaceView, error) {
	s, err := h.State(ctx, hub.DeviceSession{})
	if err != nil {
		return nil, err
	}
	return s.Workspaces, nil
}

// registry returns every registered workspace, in registration order. The
// slice is shared: callers must not modify it.
func (h *Hub) registry(ctx context.Context) ([]hub.Workspace, error) {
	ws, _, err := h.st.registry(ctx)
	return ws, err
}

// registry returns the registry and the configured default parent,
// reading them from the store the first time (and after a failed commit).
// A read that raced a change is returned but not kept.
func (st *hubState) registry(ctx context.Context) ([]hub.Workspace, string, error) {
	st.mu.Lock()
	if st.loaded {
		ws, parent := st.ws, st.parent
		st.mu.Unlock()
		return ws, parent, nil
	}
	gen := st.gen
	st.mu.Unlock()
	var ws []hub.Workspace
	var parent string
	if err := st.h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		if ws, err = tx.Workspaces(); err != nil {
			return err
		}
		parent, _, err = tx.Setting(settingDefaultParent)
		return err
	}); err != nil {
		return nil, "", err
	}
	st.mu.Lock()
	if st.gen == gen {
		st.ws, st.parent, st.loaded = ws, parent, true
	}
	st.mu.Unlock()
	return ws, parent, nil
}

// workspaces returns the registry as last known, without reading the
// store; callers that need it loaded call registry first.
func (st *hubState) workspaces() []hub.Workspace {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ws
}

// bumped advances the state revision for a change the commit path
// applied, and wakes whoever waits for one (changedSince).
func (st *hubState) bumped() {
	st.rev.Add(1)
	st.mu.Lock()
	if st.changed != nil {
		close(st.changed)
		st.changed = nil
	}
	st.mu.Unlock()
}

// changedSince returns a channel closed at the next change of the state
// revision.
func (st *hubState) changedSince() <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.changed == nil {
		st.changed = make(chan struct{})
	}
	return st.changed
}

// unsure marks the registry to be read again: a commit failed, and the
// store may have applied it anyway.
func (st *hubState) unsure() {
	st.mu.Lock()
	st.loaded = false
	st.gen++
	st.mu.Unlock()
	st.rev.Add(1)
}

// applyWorkspaceLocked applies a committed registration, update or
// deletion (deleted) of w and reports whether the workspace's path
// changed (or may have, when the registry is not loaded and the next read
// will tell), and, for a move or a deletion, where the workspace was (its
// path is "" when the registry was not loaded). The slice is replaced,
// never changed in place: readers hold it. commitMu is held.
func (st *hubState) applyWorkspaceLocked(w hub.Workspace, created, deleted bool) (moved bool, left live.Departure) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if f, ok := st.facts[w.ID]; ok {
		left = live.Departure{Path: f.path, Repo: f.folder.repo.CommonDir}
	}
	if deleted {
		left.Path = w.Path
	}
	if !st.loaded {
		st.gen++
		delete(st.facts, w.ID)
		return !deleted && !created, left
	}
	if deleted {
		st.ws = slices.DeleteFunc(slices.Clone(st.ws), func(x hub.Workspace) bool { return x.ID == w.ID })
		delete(st.facts, w.ID)
		return false, left
	}
	i := slices.IndexFunc(st.ws, func(x hub.Workspace) bool { return x.ID == w.ID })
	if i < 0 {
		st.ws = append(slices.Clip(st.ws), w)
		return false, live.Departure{}
	}
	moved = st.ws[i].Path != w.Path
	left.Path = st.ws[i].Path
	st.ws = slices.Clone(st.ws)
	st.ws[i] = w
	if moved {
		delete(st.facts, w.ID)
	}
	return moved, left
}

// applySettingLocked applies a committed setting; it reports whether the
// state shows it. commitMu is held.
func (st *hubState) applySettingLocked(key, value string) (shown bool) {
	if key != settingDefaultParent {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.parent = value
	return true
}

// forgetWorkspaceSessionFacts drops what is known of id's workspace
// session: it started or ended.
func (st *hubState) forgetWorkspaceSessionFacts(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if f, ok := st.facts[id]; ok {
		f.session, f.answered, f.reported = nil, false, hub.WorkspaceSessionFacts{}
		st.facts[id] = f
	}
}

// rebuild builds the snapshot of the current revision, learning the facts
// of workspaces never seen before; concurrent callers share one build.
func (st *hubState) rebuild(ctx context.Context) (*hub.HubState, error) {
	st.build.Lock()
	defer st.build.Unlock()
	rev := st.rev.Load()
	if s := st.snap.Load(); s != nil && s.WorkspacesRevision == rev {
		return s, nil
	}
	ws, parent, err := st.registry(ctx)
	if err != nil {
		return nil, err
	}
	running := st.h.runningSessions()
	facts := st.learn(ws, running, false)
	s := &hub.HubState{
		Version:              st.h.cfg.Version,
		HubAPIRevision:       HubAPIRevision,
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Workspaces:           make([]hub.WorkspaceView, len(ws)),
		WorkspacesRevision:   rev,
	}
	at := make(map[string]string, len(ws))
	for i, w := range ws {
		s.Workspaces[i] = st.h.withCredentials(ctx, viewOf(w, running[w.ID], facts[w.ID]))
		if !s.Workspaces[i].Running {
			s.Workspaces[i].EndedReason = st.h.endedReason(w.ID)
		}
		at[w.Path] = w.ID
	}
	for i := range s.Workspaces {
		linkWorktree(&s.Workspaces[i], facts[s.Workspaces[i].ID].folder.repo, at)
		st.h.wt.show(&s.Workspaces[i])
	}
	if d, err := st.h.resolveDefaults(parent); err == nil {
		s.Defaults = &d
	}
	st.snap.Store(s)
	st.armTTL(false)
	return s, nil
}

// view describes w as it is now, learning its facts when none are known.
func (h *Hub) view(w hub.Workspace) hub.WorkspaceView {
	running := h.runningSessions()
	v := h.withCredentials(context.Background(), viewOf(w, running[w.ID], h.st.learn([]hub.Workspace{w}, running, false)[w.ID]))
	if !v.Running {
		v.EndedReason = h.endedReason(w.ID)
	}
	return v
}

// withCredentials adds to v what its workspace is assigned and whether
// its running session needs a restart to be given it.
func (h *Hub) withCredentials(ctx context.Context, v hub.WorkspaceView) hub.WorkspaceView {
	v.Authentication, v.Signing = h.workspaceCredentialNames(ctx, v.ID)
	v.CredentialRestartRequired = v.Running && h.restartRequired(ctx, v.ID)
	return v
}

// viewOf describes w from its facts; rw is its running session, or nil.
func viewOf(w hub.Workspace, rw *runningWorkspace, f workspaceFacts) hub.WorkspaceView {
	v := hub.WorkspaceView{
		Workspace:            w,
		Authentication:       []string{},
		Signing:              []string{},
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Missing:              f.folder.missing,
	}
	if f.folder.repo.TopLevel != "" {
		v.RepositoryID, v.Branch = worktree.RepositoryID(f.folder.repo.CommonDir), f.folder.repo.Branch
	}
	if rw != nil {
		v.Running = true
		if f.session == rw && f.answered {
			v.WorkspaceAPIRevision = f.reported.WorkspaceAPIRevision
			v.Shells = f.reported.Shells
			if v.Shells == nil {
				v.Shells = []hub.Shell{}
			}
		}
	}
	return v
}

// maxLookups bounds the facts looked up at once.
const maxLookups = 8

// close stops the facts refreshes and waits for one under way.
func (st *hubState) close() {
	st.mu.Lock()
	st.closed = true
	if st.ttl != nil {
		st.ttl.Stop()
	}
	st.mu.Unlock()
	st.background.Wait()
}

func (st *hubState) parentNow() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.parent
}

// linkWorktree adds to v where it stands among its repository's
// checkouts: a main checkout with its Git directory at <folder>/.git can
// hold linked worktrees (createWorktree); a linked tree names the
// registered workspace of its main checkout (parentId). at maps the
// registered folders to their workspaces.
func linkWorktree(v *hub.WorkspaceView, repo hub.Repository, at map[string]string) {
	if repo.TopLevel == "" || path.Base(repo.CommonDir) != ".git" {
		return
	}
	main := path.Dir(repo.CommonDir)
	if repo.TopLevel == main {
		v.CreateWorktree = true
		return
	}
	if id, ok := at[main]; ok && id != v.ID {
		v.ParentID = id
	}
}
