package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// The worktree family: a workspace's repository holds a main checkout and
// linked Git worktrees, each of which can be a workspace of its own. The
// rules are hub/worktree's; this file gathers the facts they judge (git's
// listing, the stamps in the trees, the provenance records, the
// registry) into the inventory, and the other worktree*.go files run the
// operations on it.
//
// Every request names a source workspace; a linked tree resolves to its
// repository's main checkout, and the operation runs on that family.
// Operations of one repository are serialized (wtLocks, by repository
// id); a tree's folder is reserved against folder mutations and
// registrations while an operation changes it, and each operation that
// changes the disk holds a journal (worktreejournal.go) recovered at
// start. Refusals are values (*hub.WorktreeError, answered 200 with ok
// false); a Go error is for the transport: an unknown workspace, a
// cancelled request, a store that failed.

// wtFamily is a repository's checkouts as git listed them just now.
type wtFamily struct {
	// source is the workspace the request named; main the main
	// checkout's workspace (source when the main is not registered).
	source, main hub.Workspace
	listing      hub.WorktreeListing
	repoID       string
	// mainPath is the main checkout's folder.
	mainPath string
	// pl is the machine the repository is on: its git and disk run
	// every operation of the family.
	pl place
}

// wtErrorf is a refusal without a retry.
func wtErrorf(code hub.WorktreeCode, msg string) *hub.WorktreeError {
	return hub.WorktreeRefusal(code, msg)
}

// wtFacts are the worktree family's facts kept in memory: when each
// repository was last fetched through the Hub.
type wtFacts struct {
	mu      sync.Mutex
	fetched map[string]int64  // by repository id: Unix milliseconds
	seen    map[string]string // by repository id: the last inventory read, as observed
	trees   map[string]wtTree // by workspace id: what the state shows of a registered linked tree
}

// wtTree is what the Hub state shows of a registered linked worktree.
type wtTree struct {
	repo      string // its repository's id
	ownership hub.WorktreeOwnership
	sourceRef string
	replaced  bool
}

// remember keeps what cs, repo's checkouts read just now, says of its
// registered linked trees, forgets what it kept of repo's trees that are
// no longer registered (so it holds no more than the trees registered
// now), and reports whether that changed what the state shows.
func (f *wtFacts) remember(repo string, cs []hub.WorktreeCheckout) (changed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.trees == nil {
		f.trees = map[string]wtTree{}
	}
	registered := map[string]bool{}
	for _, c := range cs {
		if c.Main || !c.Registered {
			continue
		}
		registered[c.WorkspaceID] = true
		t := wtTree{repo: repo, ownership: c.Ownership, sourceRef: c.SourceRef, replaced: c.Availability == hub.WTReplaced}
		if f.trees[c.WorkspaceID] != t {
			f.trees[c.WorkspaceID], changed = t, true
		}
	}
	for id, t := range f.trees {
		if t.repo == repo && !registered[id] {
			delete(f.trees, id)
		}
	}
	return changed
}

// show adds to v what is known of it as a linked worktree.
func (f *wtFacts) show(v *hub.WorkspaceView) {
	f.mu.Lock()
	t, ok := f.trees[v.ID]
	f.mu.Unlock()
	if ok && v.ParentID != "" {
		v.Ownership, v.SourceRef, v.Replaced = t.ownership, t.sourceRef, t.replaced
	}
}

// observed reports whether an inventory of repo read now differs from
// the last one read (never on the first read, which sets the baseline),
// and remembers it.
func (f *wtFacts) observed(repo string, cs []hub.WorktreeCheckout) (changed bool) {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s|%s|%s|%s|%s|%t|%t|%s|%s|%t|%t|%t|%s\n", c.CheckoutID, c.WorkspaceID, c.ParentWorkspaceID, c.Path,
			c.Branch, c.Detached, c.Main, c.Ownership, c.Availability, c.Registered, c.Running, c.Locked, c.SourceRef)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]string{}
	}
	before, ok := f.seen[repo]
	f.seen[repo] = b.String()
	return ok && before != b.String()
}

func (f *wtFacts) fetchedAt(repo string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetched[repo]
}

func (f *wtFacts) setFetched(repo string, at int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fetched == nil {
		f.fetched = map[string]int64{}
	}
	f.fetched[repo] = at
}

// family reads the repository of workspace sourceID. An unknown
// workspace is a NotFound error; a repository git cannot list is a
// refusal.
func (h *Hub) family(ctx context.Context, sourceID string) (wtFamily, *hub.WorktreeError, error) {
	w, err := h.workspace(ctx, sourceID)
	if err != nil {
		return wtFamily{}, nil, err
	}
	f := wtFamily{source: w, main: w}
	if f.pl, err = h.placeOf(ctx, w.Backend); err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "a workspace's machine cannot be reached", slog.String("workspace", w.ID), slog.Any("err", err))
		return f, wtErrorf(hub.WTInventoryUnavailable, "The machine this workspace lives on cannot be reached.").WithRetry(hub.WTRetryRefresh), nil
	}
	f.listing, err = f.pl.git.ListWorktrees(ctx, w.Path)
	switch {
	case errors.Is(err, hub.ErrNoRepository):
		return f, wtErrorf(hub.WTNotFound, "The workspace is not in a Git repository."), nil
	case err != nil:
		h.log.LogAttrs(ctx, slog.LevelWarn, "git could not list a repository's worktrees", slog.String("workspace", w.ID), slog.Any("err", err))
		return f, wtErrorf(hub.WTInventoryUnavailable, "The worktrees of this repository could not be read.").WithRetry(hub.WTRetryRefresh), nil
	case f.listing.Bare || len(f.listing.Entries) == 0 || !f.listing.Entries[0].Main:
		return f, wtErrorf(hub.WTInventoryUnavailable, "A bare repository has no main checkout to hold worktrees."), nil
	}
	f.repoID = repositoryID(f.pl, f.listing.CommonDir)
	f.mainPath = f.pl.canonical(f.listing.Entries[0].Path)
	if f.mainPath != w.Path {
		if m, ok, err := h.registeredAt(ctx, f.pl.name, f.mainPath); err != nil {
			return wtFamily{}, nil, err
		} else if ok {
			f.main = m
		}
	}
	return f, nil, nil
}

// repositoryID names the repository whose common Git directory is
// commonDir on pl: by the path on the Hub's machine, and by the path
// behind the host's name elsewhere, so equal paths on two machines are
// two repositories.
func repositoryID(pl place, commonDir string) string {
	return worktree.RepositoryID(pl.key(commonDir))
}

// checkouts describes every checkout of f: those git lists, then the
// registered trees the Hub made that git no longer lists (missing).
func (h *Hub) checkouts(ctx context.Context, f wtFamily) ([]hub.WorktreeCheckout, error) {
	var ws []hub.Workspace
	var provs []hub.WorktreeProvenance
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		if ws, err = tx.Workspaces(); err != nil {
			return err
		}
		provs, err = tx.WorktreeProvenances(f.repoID)
		return err
	}); err != nil {
		return nil, err
	}
	at := map[string]hub.Workspace{} // the family's machine's workspaces, by path
	for _, w := range ws {
		if w.Backend == f.pl.name {
			at[w.Path] = w
		}
	}
	provOf, provAt := map[string]hub.WorktreeProvenance{}, map[string]hub.WorktreeProvenance{}
	for _, p := range provs {
		provOf[p.CheckoutID], provAt[p.Path] = p, p
	}
	mainWS, mainRegistered := at[f.mainPath]
	listed := map[string]bool{}
	out := make([]hub.WorktreeCheckout, 0, len(f.listing.Entries))
	for _, e := range f.listing.Entries {
		c := hub.WorktreeCheckout{RepositoryID: f.repoID, Path: f.pl.canonical(e.Path), Branch: e.Branch,
			Detached: e.Detached, Main: e.Main, Locked: e.Locked, Availability: hub.WTPresent, Head: shortHead(e.Head)}
		if e.Prunable {
			c.Availability = hub.WTMissing
		}
		if e.Main {
			c.CheckoutID, c.Ownership = worktree.CheckoutID(e.GitDir, ""), hub.OwnedMain
		} else {
			c.CheckoutID, c.Ownership = h.identify(ctx, f.pl, e.GitDir, provOf)
			c.SourceRef = provOf[c.CheckoutID].SourceRef
		}
		listed[c.Path] = true
		if w, ok := at[c.Path]; ok {
			c.Registered, c.WorkspaceID, c.Running = true, w.ID, h.Running(w.ID)
			if !e.Main && mainRegistered {
				c.ParentWorkspaceID = mainWS.ID
			}
			if p, ok := provAt[c.Path]; ok && !e.Main && p.CheckoutID != c.CheckoutID {
				c.Availability = hub.WTReplaced // another checkout where the Hub's was
			}
		}
		out = append(out, c)
	}
	for _, p := range provs {
		w, registered := at[p.Path]
		if listed[p.Path] || !registered || len(out) == hub.MaxWorktrees {
			continue
		}
		c := hub.WorktreeCheckout{CheckoutID: p.CheckoutID, RepositoryID: f.repoID, Path: p.Path, Ownership: hub.OwnedByWharf,
			Availability: hub.WTMissing, Registered: true, WorkspaceID: w.ID, Running: h.Running(w.ID), SourceRef: p.SourceRef}
		if mainRegistered {
			c.ParentWorkspaceID = mainWS.ID
		}
		out = append(out, c)
	}
	if h.wt.remember(f.repoID, out) {
		h.settle(ctx, worktreeTreesSeen{})
	}
	return out, nil
}

// identify names a linked tree from its git directory and stamp, and says
// whose it is: the Hub's when the stamp has a provenance record, external
// without one, uncertain when the stamp cannot be read or is not one the
// Hub writes.
func (h *Hub) identify(ctx context.Context, pl place, gitDir string, provOf map[string]hub.WorktreeProvenance) (string, hub.WorktreeOwnership) {
	stamp, err := pl.git.ReadStamp(ctx, gitDir)
	switch {
	case err != nil:
		h.log.LogAttrs(ctx, slog.LevelWarn, "a worktree's stamp could not be read", slog.Any("err", err))
		return worktree.CheckoutID(gitDir, ""), hub.OwnedUncertain
	case stamp == "":
		return worktree.CheckoutID(gitDir, ""), hub.OwnedExternal
	case !worktree.ValidStamp(stamp):
		return worktree.CheckoutID(gitDir, ""), hub.OwnedUncertain
	}
	id := worktree.CheckoutID(gitDir, stamp)
	if _, ok := provOf[id]; ok {
		return id, hub.OwnedByWharf
	}
	return id, hub.OwnedExternal
}

// shortHead is a commit's first 12 hex digits, for diagnostics.
func shortHead(head string) string {
	if len(head) > 12 {
		return head[:12]
	}
	return head
}

// refs reads the branches a new tree can start from.
func (h *Hub) refs(ctx context.Context, f wtFamily) (hub.WorktreeRefs, error) {
	local, remote, err := f.pl.git.Refs(ctx, f.mainPath)
	if err != nil {
		return hub.WorktreeRefs{}, err
	}
	if local == nil {
		local = []string{}
	}
	if remote == nil {
		remote = []string{}
	}
	return hub.WorktreeRefs{Local: local, Remote: remote, FetchedAt: h.wt.fetchedAt(f.repoID)}, nil
}

// WorktreeInventory describes every checkout of the repository of
// workspace sourceID (hubListWorktrees). A repository git cannot list is
// an inventory with status error; an unknown workspace is NotFound.
func (h *Hub) WorktreeInventory(ctx context.Context, caller hub.DeviceSession, sourceID string) (hub.WorktreeInventory, error) {
	w, err := h.workspace(ctx, sourceID)
	if err != nil {
		return hub.WorktreeInventory{}, err
	}
	// The branches are read while git lists the checkouts: every
	// checkout shares them, so the source's folder will do, and the two
	// git processes overlap.
	type refsRead struct {
		local, remote []string
		err           error
	}
	refsCh := make(chan refsRead, 1)
	go func() {
		pl, err := h.placeOf(ctx, w.Backend)
		if err != nil { // family refuses it
			refsCh <- refsRead{}
			return
		}
		local, remote, err := pl.git.Refs(ctx, w.Path)
		refsCh <- refsRead{local, remote, err}
	}()
	f, refusal, err := h.family(ctx, sourceID)
	rr := <-refsCh
	if err != nil {
		return hub.WorktreeInventory{}, err
	}
	failed := func(e *hub.WorktreeError) hub.WorktreeInventory {
		e.Message = worktree.Sanitize(e.Message)
		return hub.WorktreeInventory{RepositoryID: hub.UnknownRepository, SourceWorkspaceID: f.main.ID, Status: hub.InventoryError,
			Checkouts: []hub.WorktreeCheckout{}, Refs: hub.WorktreeRefs{Local: []string{}, Remote: []string{}}, Error: e}
	}
	if refusal != nil {
		return failed(refusal), nil
	}
	cs, err := h.checkouts(ctx, f)
	if err != nil {
		return hub.WorktreeInventory{}, err
	}
	refs := hub.WorktreeRefs{Local: rr.local, Remote: rr.remote, FetchedAt: h.wt.fetchedAt(f.repoID)}
	if refs.Local == nil {
		refs.Local = []string{}
	}
	if refs.Remote == nil {
		refs.Remote = []string{}
	}
	if err := rr.err; err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "git could not list a repository's branches", slog.String("workspace", sourceID), slog.Any("err", err))
		return failed(wtErrorf(hub.WTInventoryUnavailable, "The branches of this repository could not be read.").WithRetry(hub.WTRetryRefresh)), nil
	}
	if h.wt.observed(f.repoID, cs) {
		// Something changed that no operation of the Hub's announced (a
		// tree made or removed by hand): the family's pages are told.
		h.live.AnnounceWorktrees(nil, f.main)
	}
	return hub.WorktreeInventory{RepositoryID: f.repoID, SourceWorkspaceID: f.main.ID, Status: hub.InventoryReady, Checkouts: cs, Refs: refs}, nil
}

// nestedIn reports whether another linked tree of cs lies inside dir.
func nestedIn(dir string, cs []hub.WorktreeCheckout) bool {
	return slices.ContainsFunc(cs, func(c hub.WorktreeCheckout) bool {
		return !c.Main && c.Path != dir && strings.HasPrefix(c.Path, dir+"/")
	})
}

// sanitized returns e with a message fit to show, for the answer.
func sanitized(e *hub.WorktreeError) *hub.WorktreeError {
	if e == nil {
		return nil
	}
	c := *e
	c.Message = worktree.Sanitize(c.Message)
	return &c
}
