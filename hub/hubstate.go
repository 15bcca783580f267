package hub

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// HubState is the Hub's summary for a client (GET /api/hub/state): one
// immutable snapshot per revision, shared by every caller until something
// it shows changes. Every Hub user sees every workspace: the contract has
// no per-user registry.
type HubState struct {
	Version              string
	HubAPIRevision       int
	WorkspaceAPIRevision int
	Workspaces           []WorkspaceView // shared and read-only
	// WorkspacesRevision identifies this snapshot: equal revisions mean
	// equal states, so what a client derives from one may be reused.
	WorkspacesRevision uint64
	// Defaults is nil when the preference cannot be resolved (the home
	// directory is unknown); the state is still served.
	Defaults *WorkspaceDefaults

	encOnce sync.Once
	enc     []byte
}

// Encoded returns encode(s), computed once per snapshot: a transport keeps
// its encoding of the state with the state, so an unchanged state is
// never encoded twice.
func (s *HubState) Encoded(encode func(*HubState) []byte) []byte {
	s.encOnce.Do(func() { s.enc = encode(s) })
	return s.enc
}

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
	ws     []Workspace               // registration order; replaced on change, never modified in place
	parent string                    // the configured default parent, "" when none
	facts  map[string]workspaceFacts // by workspace id

	rev        atomic.Uint64 // bumped by every change a state answer may show
	snap       atomic.Pointer[HubState]
	build      sync.Mutex     // one snapshot built at a time
	stale      atomic.Bool    // FactsTTL has passed since the facts were last refreshed
	refreshing atomic.Bool    // a background refresh of the facts runs
	ttl        Timer          // sets stale; guarded by mu
	closed     bool           // no refresh starts any more; guarded by mu
	background sync.WaitGroup // refreshes, waited for by Close
}

// workspaceFacts are the facts of one workspace as last learned.
type workspaceFacts struct {
	path   string // the folder the folder facts are of; "" when unknown
	folder folderFacts
	// session is the running session the session facts are of; nil when
	// none are known. answered is false when it did not answer in time.
	session  *runningWorkspace
	answered bool
	reported WorkspaceSessionFacts
}

// folderFacts are what a listing shows about a workspace's folder.
type folderFacts struct {
	missing bool
	repo    Repository // zero when in no repository or git could not tell
}

// State returns the Hub's state as the caller sees it: the current
// snapshot, built afresh when something changed.
func (h *Hub) State(ctx context.Context, caller DeviceSession) (*HubState, error) {
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
func (h *Hub) Workspaces(ctx context.Context) ([]WorkspaceView, error) {
	s, err := h.State(ctx, DeviceSession{})
	if err != nil {
		return nil, err
	}
	return s.Workspaces, nil
}

// registry returns every registered workspace, in registration order. The
// slice is shared: callers must not modify it.
func (h *Hub) registry(ctx context.Context) ([]Workspace, error) {
	ws, _, err := h.st.registry(ctx)
	return ws, err
}

// registry returns the registry and the configured default parent,
// reading them from the store the first time (and after a failed commit).
// A read that raced a change is returned but not kept.
func (st *hubState) registry(ctx context.Context) ([]Workspace, string, error) {
	st.mu.Lock()
	if st.loaded {
		ws, parent := st.ws, st.parent
		st.mu.Unlock()
		return ws, parent, nil
	}
	gen := st.gen
	st.mu.Unlock()
	var ws []Workspace
	var parent string
	if err := st.h.store.View(ctx, func(tx Tx) error {
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
func (st *hubState) workspaces() []Workspace {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ws
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

// departure is where a workspace was before it moved or left the
// registry: its old path, and the common Git directory the facts knew for
// it ("" when none were known). Once the folder is moved or removed, git
// can no longer tell.
type departure struct {
	path, repo string
}

// applyLocked applies a committed registry or setting change and reports
// whether a workspace's path changed (or may have, when the registry is
// not loaded and the next read will tell), and, for a move or a deletion,
// where the workspace was (its path is "" when the registry was not
// loaded). The slice is replaced, never changed in place: readers hold
// it. commitMu is held.
func (st *hubState) applyLocked(c change) (moved bool, left departure) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if f, ok := st.facts[c.w.ID]; ok && c.kind != settingSaved {
		left = departure{path: f.path, repo: f.folder.repo.CommonDir}
	}
	if c.kind == workspaceDeleted {
		left.path = c.w.Path
	}
	if !st.loaded {
		st.gen++
		delete(st.facts, c.w.ID)
		return c.kind == workspaceSaved && !c.created, left
	}
	switch c.kind {
	case workspaceSaved:
		i := slices.IndexFunc(st.ws, func(w Workspace) bool { return w.ID == c.w.ID })
		if i < 0 {
			st.ws = append(slices.Clip(st.ws), c.w)
			return false, departure{}
		}
		moved = st.ws[i].Path != c.w.Path
		left.path = st.ws[i].Path
		st.ws = slices.Clone(st.ws)
		st.ws[i] = c.w
		if moved {
			delete(st.facts, c.w.ID)
		}
	case workspaceDeleted:
		st.ws = slices.DeleteFunc(slices.Clone(st.ws), func(w Workspace) bool { return w.ID == c.w.ID })
		delete(st.facts, c.w.ID)
	case settingSaved:
		if c.key == settingDefaultParent {
			st.parent = c.value
		}
	}
	return moved, left
}

// forgetWorkspaceSessionFacts drops what is known of id's workspace
// session: it started or ended.
func (st *hubState) forgetWorkspaceSessionFacts(id string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if f, ok := st.facts[id]; ok {
		f.session, f.answered, f.reported = nil, false, WorkspaceSessionFacts{}
		st.facts[id] = f
	}
}

// rebuild builds the snapshot of the current revision, learning the facts
// of workspaces never seen before; concurrent callers share one build.
func (st *hubState) rebuild(ctx context.Context) (*HubState, error) {
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
	s := &HubState{
		Version:              st.h.cfg.Version,
		HubAPIRevision:       HubAPIRevision,
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Workspaces:           make([]WorkspaceView, len(ws)),
		WorkspacesRevision:   rev,
	}
	for i, w := range ws {
		s.Workspaces[i] = viewOf(w, running[w.ID], facts[w.ID])
	}
	if d, err := st.h.resolveDefaults(parent); err == nil {
		s.Defaults = &d
	}
	st.snap.Store(s)
	st.armTTL(false)
	return s, nil
}

// view describes w as it is now, learning its facts when none are known.
func (h *Hub) view(w Workspace) WorkspaceView {
	running := h.runningSessions()
	return viewOf(w, running[w.ID], h.st.learn([]Workspace{w}, running, false)[w.ID])
}

// viewOf describes w from its facts; rw is its running session, or nil.
func viewOf(w Workspace, rw *runningWorkspace, f workspaceFacts) WorkspaceView {
	v := WorkspaceView{
		Workspace:            w,
		Authentication:       []string{},
		Signing:              []string{},
		WorkspaceAPIRevision: WorkspaceAPIRevision,
		Missing:              f.folder.missing,
	}
	if f.folder.repo.TopLevel != "" {
		v.RepositoryID, v.Branch = repositoryID(f.folder.repo.CommonDir), f.folder.repo.Branch
	}
	if rw != nil {
		v.Running = true
		if f.session == rw && f.answered {
			v.WorkspaceAPIRevision = f.reported.WorkspaceAPIRevision
			v.Shells = f.reported.Shells
			if v.Shells == nil {
				v.Shells = []Shell{}
			}
		}
	}
	return v
}

// learn returns the facts of ws. Facts not known for a workspace's
// current path and session are looked up (all of them with fresh), at
// most maxLookups at a time, each bounded by FactsTimeout, and kept.
func (st *hubState) learn(ws []Workspace, running map[string]*runningWorkspace, fresh bool) map[string]workspaceFacts {
	st.mu.Lock()
	known := make(map[string]workspaceFacts, len(ws))
	var todo []Workspace
	for _, w := range ws {
		f := st.facts[w.ID]
		known[w.ID] = f
		if fresh || f.path != w.Path || (running[w.ID] != nil && f.session != running[w.ID]) {
			todo = append(todo, w)
		}
	}
	st.mu.Unlock()
	if len(todo) == 0 {
		return known
	}
	found := make([]workspaceFacts, len(todo))
	sem := make(chan struct{}, maxLookups)
	var wg sync.WaitGroup
	for i, w := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			found[i] = st.h.lookUp(w, running[w.ID])
		})
	}
	wg.Wait()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.facts == nil {
		st.facts = map[string]workspaceFacts{}
	}
	for i, w := range todo {
		known[w.ID] = found[i]
		// Keep it unless the registry or the session moved on meanwhile.
		if cur := st.workspaceLocked(w.ID); cur.Path == w.Path && st.h.workspaceSession(w.ID) == running[w.ID] {
			st.facts[w.ID] = found[i]
		}
	}
	return known
}

// maxLookups bounds the facts looked up at once.
const maxLookups = 8

func (st *hubState) workspaceLocked(id string) Workspace {
	for _, w := range st.ws {
		if w.ID == id {
			return w
		}
	}
	return Workspace{}
}

// lookUp learns the facts of w, whose session is rw (nil when stopped).
// The lookups may outlive the request that asked, not the Hub.
func (h *Hub) lookUp(w Workspace, rw *runningWorkspace) workspaceFacts {
	f := workspaceFacts{path: w.Path, folder: h.folderOf(w.Path)}
	if rw != nil {
		ctx, cancel := context.WithTimeout(h.bg, h.cfg.FactsTimeout)
		defer cancel()
		rep, err := rw.rs.Facts(ctx)
		f.session, f.answered, f.reported = rw, err == nil, rep
	}
	return f
}

// folderOf learns the facts of the folder dir.
func (h *Hub) folderOf(dir string) folderFacts {
	if !h.isDir(dir) {
		return folderFacts{missing: true}
	}
	ctx, cancel := context.WithTimeout(h.bg, h.cfg.FactsTimeout)
	defer cancel()
	repo, err := h.git.Inspect(ctx, dir)
	if err != nil {
		repo = Repository{}
	}
	return folderFacts{repo: repo}
}

// commonDir returns the common Git directory of w's repository, "" when
// none or unknown: from the facts when they are of w's path, else asked.
func (h *Hub) commonDir(ctx context.Context, w Workspace) string {
	h.st.mu.Lock()
	f, ok := h.st.facts[w.ID]
	h.st.mu.Unlock()
	if ok && f.path == w.Path {
		return f.folder.repo.CommonDir
	}
	return h.folderOf(w.Path).repo.CommonDir
}

// armTTL arms the timer that marks the facts stale FactsTTL from now;
// again re-arms it after a refresh, otherwise an armed timer is kept.
func (st *hubState) armTTL(again bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || (st.ttl != nil && !again) {
		return
	}
	if st.ttl != nil {
		st.ttl.Stop()
	}
	st.ttl = st.h.clock.AfterFunc(st.h.cfg.FactsTTL, func() { st.stale.Store(true) })
}

// refreshInBackground starts a refresh of every workspace's facts, unless
// one runs. The state answer asks for one when the facts are stale, so a
// Hub nobody asks spends nothing on git or its children.
func (st *hubState) refreshInBackground() {
	if !st.refreshing.CompareAndSwap(false, true) {
		return
	}
	// Started under st.mu, which close takes before it waits: a refresh
	// is either started before close waits for it, or never.
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		st.refreshing.Store(false)
		return
	}
	st.stale.Store(false)
	st.background.Go(func() {
		defer st.refreshing.Store(false)
		st.refresh()
		st.armTTL(true)
	})
}

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

// refresh looks every workspace's facts up again and, when any differ
// from the ones shown, settles a factsChanged, so the next answer shows
// them.
func (st *hubState) refresh() {
	st.mu.Lock()
	ws, loaded := st.ws, st.loaded
	before := make(map[string]workspaceFacts, len(ws))
	for _, w := range ws {
		before[w.ID] = st.facts[w.ID]
	}
	st.mu.Unlock()
	if !loaded {
		return
	}
	running := st.h.runningSessions()
	after := st.learn(ws, running, true)
	changed := false
	for _, w := range ws {
		if !sameFacts(before[w.ID], after[w.ID]) {
			changed = true
		}
	}
	if s := st.snap.Load(); s != nil {
		d, err := st.h.resolveDefaults(st.parentNow())
		if (err == nil) != (s.Defaults != nil) || (err == nil && d != *s.Defaults) {
			changed = true
		}
	}
	if changed {
		st.h.settle(st.h.bg, change{kind: factsChanged})
	}
}

func (st *hubState) parentNow() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.parent
}

func sameFacts(a, b workspaceFacts) bool {
	return a.path == b.path && a.folder == b.folder && a.session == b.session && a.answered == b.answered &&
		a.reported.WorkspaceAPIRevision == b.reported.WorkspaceAPIRevision && slices.Equal(a.reported.Shells, b.reported.Shells)
}
