package service

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// The facts a listing shows beside the registry (a folder missing, its
// repository and branch, what a running session reports), learned from
// the FS and git ports and the sessions, kept per workspace, refreshed in
// the background once FactsTTL has passed.

// workspaceFacts are the facts of one workspace as last learned.
type workspaceFacts struct {
	path   string // the folder the folder facts are of; "" when unknown
	folder folderFacts
	// session is the running session the session facts are of; nil when
	// none are known. answered is false when it did not answer in time.
	session  *runningWorkspace
	answered bool
	reported hub.WorkspaceSessionFacts
}

// folderFacts are what a listing shows about a workspace's folder.
type folderFacts struct {
	missing bool
	repo    hub.Repository // zero when in no repository or git could not tell
}

// learn returns the facts of ws. Facts not known for a workspace's
// current path and session are looked up (all of them with fresh), at
// most maxLookups at a time, each bounded by FactsTimeout, and kept.
func (st *hubState) learn(ws []hub.Workspace, running map[string]*runningWorkspace, fresh bool) map[string]workspaceFacts {
	st.mu.Lock()
	known := make(map[string]workspaceFacts, len(ws))
	var todo []hub.Workspace
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

func (st *hubState) workspaceLocked(id string) hub.Workspace {
	for _, w := range st.ws {
		if w.ID == id {
			return w
		}
	}
	return hub.Workspace{}
}

// lookUp learns the facts of w, whose session is rw (nil when stopped).
// The lookups may outlive the request that asked, not the Hub.
func (h *Hub) lookUp(w hub.Workspace, rw *runningWorkspace) workspaceFacts {
	f := workspaceFacts{path: w.Path, folder: h.folderOfWorkspace(w)}
	if rw != nil {
		ctx, cancel := context.WithTimeout(h.bg, h.cfg.FactsTimeout)
		defer cancel()
		rep, err := rw.rs.Facts(ctx)
		f.session, f.answered, f.reported = rw, err == nil, rep
	}
	return f
}

// folderOf learns the facts of the folder dir on the Hub's machine.
func (h *Hub) folderOf(dir string) folderFacts { return h.folderOn(h.here, dir) }

// folderOfWorkspace learns the facts of w's folder on its machine. A
// machine that cannot be reached tells nothing (not a missing folder).
func (h *Hub) folderOfWorkspace(w hub.Workspace) folderFacts {
	pl, err := h.placeOf(h.bg, w.Backend)
	if err != nil {
		return folderFacts{}
	}
	return h.folderOn(pl, w.Path)
}

// folderOn learns the facts of the folder dir on pl.
func (h *Hub) folderOn(pl place, dir string) folderFacts {
	fi, err := pl.fs.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir():
		return folderFacts{missing: true}
	case err != nil && !pl.local():
		return folderFacts{} // unreachable, or refused: unknown
	case err != nil:
		return folderFacts{missing: true}
	}
	ctx, cancel := context.WithTimeout(h.bg, h.cfg.FactsTimeout)
	defer cancel()
	repo, err := pl.git.Inspect(ctx, dir)
	if err != nil {
		repo = hub.Repository{}
	}
	return folderFacts{repo: repo}
}

// commonDir returns the common Git directory of w's repository, "" when
// none or unknown: from the facts when they are of w's path, else asked.
func (h *Hub) commonDir(w hub.Workspace) string {
	h.st.mu.Lock()
	f, ok := h.st.facts[w.ID]
	h.st.mu.Unlock()
	if ok && f.path == w.Path {
		return f.folder.repo.CommonDir
	}
	return h.folderOfWorkspace(w).repo.CommonDir
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
		st.h.settle(st.h.bg, factsChanged{})
	}
}

func sameFacts(a, b workspaceFacts) bool {
	return a.path == b.path && a.folder == b.folder && a.session == b.session && a.answered == b.answered &&
		a.reported.WorkspaceAPIRevision == b.reported.WorkspaceAPIRevision && slices.Equal(a.reported.Shells, b.reported.Shells)
}

// shellsMoved is the broker's word that the shells of ws's running session
// rs changed (live.Config.ShellsMoved): that workspace's session facts are
// read again in the background, so the next state answer shows them
// without waiting for FactsTTL. Reads of one workspace are coalesced: one
// runs at a time, and moves told meanwhile cost one more.
func (st *hubState) shellsMoved(ws string, rs hub.WorkspaceSession) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	if _, running := st.shellsOwed[ws]; running {
		st.shellsOwed[ws] = true
		return
	}
	if st.shellsOwed == nil {
		st.shellsOwed = map[string]bool{}
	}
	st.shellsOwed[ws] = false
	// Started under st.mu, which close takes before it waits.
	st.background.Go(func() {
		for {
			st.refreshSessionFacts(ws)
			st.mu.Lock()
			again := st.shellsOwed[ws] && !st.closed
			if !again {
				delete(st.shellsOwed, ws)
				st.mu.Unlock()
				return
			}
			st.shellsOwed[ws] = false
			st.mu.Unlock()
		}
	})
}

// refreshSessionFacts reads again what ws's running session reports, when
// the facts kept are of that session (otherwise the next state answer
// looks them all up anyway), and settles a factsChanged when they differ.
// The folder's facts are left alone: a shell costs no git process.
func (st *hubState) refreshSessionFacts(ws string) {
	rw := st.h.workspaceSession(ws)
	st.mu.Lock()
	f, ok := st.facts[ws]
	st.mu.Unlock()
	if rw == nil || !ok || f.session != rw {
		return
	}
	ctx, cancel := context.WithTimeout(st.h.bg, st.h.cfg.FactsTimeout)
	rep, err := rw.rs.Facts(ctx)
	cancel()
	st.mu.Lock()
	cur, ok := st.facts[ws]
	if !ok || cur.session != rw || cur.path != f.path {
		st.mu.Unlock()
		return // moved on meanwhile: the next answer looks the facts up
	}
	next := cur
	next.answered, next.reported = err == nil, rep
	st.facts[ws] = next
	st.mu.Unlock()
	if !sameFacts(cur, next) {
		st.h.settle(st.h.bg, factsChanged{})
	}
}
