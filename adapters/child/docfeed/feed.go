package docfeed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/uuid"
)

// Feed is the document feed of one workspace folder. Create it with New,
// run it with Run, and read it with Subscribe or Handler. Its methods are
// safe for concurrent use.
type Feed struct {
	root  string
	opts  Options
	git   *gitRunner
	log   *slog.Logger
	state *state
	// seq is the single sequence of the feed: every file change and every
	// publish takes its next value.
	seq     atomic.Int64
	started atomic.Bool
	coll    *collector
	repo    atomic.Pointer[repoInfo] // set by the loop, read by the refresher

	refreshReq chan struct{} // a repository refresh is wanted (capacity 1)
	pollNow    chan struct{} // check Git metadata now (capacity 1)

	// Owned by the loop goroutine.
	pending        pendingQueue
	pendingStatus  string // discovery to publish once pending drains ("" = none)
	pendingMessage string
	indexed        bool  // the initial inventory has been published
	lastChanged    int64 // revision of the file of the last changedId
	watchFailure   string
}

// New returns the feed of the folder root, which must be an absolute path
// to a directory (Run checks). Nothing runs until Run.
func New(root string, opts Options) *Feed {
	opts = opts.withDefaults()
	root = filepath.Clean(root)
	f := &Feed{
		root:       root,
		opts:       opts,
		git:        newGitRunner(opts),
		log:        opts.Logger,
		coll:       newCollector(),
		refreshReq: make(chan struct{}, 1),
		pollNow:    make(chan struct{}, 1),
		pending:    pendingQueue{byRel: map[string]change{}},
	}
	f.state = newState(stateConfig{
		epoch:       uuid.NewString(),
		root:        root,
		label:       filepath.Base(root),
		build:       opts.Build,
		apiRevision: opts.WorkspaceAPIRevision,
		follow:      !opts.DisableFollow,
		now:         opts.Now,
		queueFrames: opts.QueueFrames,
		queueBytes:  opts.QueueBytes,
	}, &f.seq)
	return f
}

// Run indexes and watches the folder, publishing to subscribers, until ctx
// ends; then it stops everything it started (the watcher, git commands,
// its goroutines) and ends every subscription before returning nil. It
// fails at once, also ending subscriptions, when the root is not an
// absolute path to a directory or the watcher cannot start. Run may be
// called once.
func (f *Feed) Run(ctx context.Context) error {
	if !f.started.CompareAndSwap(false, true) {
		return errors.New("docfeed: Run called more than once")
	}
	defer f.state.close()
	if !filepath.IsAbs(f.root) {
		return fmt.Errorf("docfeed: root %q is not an absolute path", f.root)
	}
	if fi, err := os.Lstat(f.root); err != nil {
		return fmt.Errorf("docfeed: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("docfeed: root %s is not a directory (symbolic links are not followed)", f.root)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("docfeed: start watcher: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	// Deferred in reverse: cancel (kills git), close the watcher (ends the
	// collector), wait for both goroutines, remove git's shadow
	// directories, then close the state.
	defer f.git.cmd.Close()
	defer wg.Wait()
	defer w.Close()
	defer cancel()
	wg.Go(func() { f.coll.run(w) })
	wg.Go(func() { f.refresher(ctx) })

	ix := &index{root: f.root, git: f.git, watcher: w, seq: &f.seq,
		files: map[string]*entry{}, watched: map[string]uint64{}}
	f.loop(ctx, ix)
	return nil
}

// loop is the feed's file side: it settles due events into pending
// changes and publishes them in batches, until ctx ends.
func (f *Feed) loop(ctx context.Context, ix *index) {
	f.rebuild(ctx, ix, true)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for ctx.Err() == nil {
		if f.pending.len() > 0 || f.pendingStatus != "" {
			// The rest of a large batch goes in the next tick, at once.
			f.publishBatch()
			continue
		}
		at, ok := f.coll.due(f.opts.Quiet, f.opts.MaxDelay)
		var fire <-chan time.Time
		if ok {
			timer.Reset(time.Until(at))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-f.coll.kick:
		case <-fire:
			// Events since the timer was set move the deadline on.
			if at, ok := f.coll.due(f.opts.Quiet, f.opts.MaxDelay); ok && time.Now().Before(at) {
				break
			}
			f.settle(ctx, ix)
		}
		timer.Stop()
	}
}

// settle resolves the collected events into pending changes, or rebuilds
// the index when events were lost or the rules of the whole tree changed.
func (f *Feed) settle(ctx context.Context, ix *index) {
	dirty, werr := f.coll.take()
	switch {
	case werr != nil:
		f.log.Warn("watcher error; re-indexing", "err", werr)
		f.rebuild(ctx, ix, false)
		return
	case ix.needsRebuild(dirty):
		f.rebuild(ctx, ix, false)
		return
	}
	changes, err := ix.resolve(ctx, dirty)
	if err != nil {
		if ctx.Err() == nil {
			f.log.Warn("resolving changes failed; re-indexing", "err", err)
			f.rebuild(ctx, ix, false)
		}
		return
	}
	f.pending.add(changes)
	if ix.watchFailure != f.watchFailure {
		f.watchFailure = ix.watchFailure
		f.pendingStatus, f.pendingMessage = discoveryError, ix.watchFailure
	}
}

// rebuildDelays are the waits before each attempt of a rebuild.
var rebuildDelays = []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, time.Second}

// rebuild indexes the whole root. The initial one queues the inventory as
// batches (discovery indexing until the last); a later one (a recovery)
// publishes discovery recovering, then the new inventory as a reset, so
// every subscriber gets a fresh snapshot. Failed attempts are retried
// after growing delays; a final failure is reported through discovery.
func (f *Feed) rebuild(ctx context.Context, ix *index, initial bool) {
	if !initial {
		f.state.publish(update{status: discoveryRecovering})
	}
	var err error
	for _, d := range rebuildDelays {
		if d > 0 && !wait(ctx, d) {
			return
		}
		var repo repoInfo
		if repo, err = detectRepo(ctx, f.git, f.root); err == nil {
			f.repo.Store(&repo)
			err = ix.rebuild(ctx, repo)
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		f.log.Warn("indexing failed", "err", err)
	}
	if ctx.Err() != nil {
		return
	}
	f.signal(f.refreshReq)
	f.pending.clear()
	status, message := discoveryReady, ""
	if ix.watchFailure != "" {
		status, message = discoveryError, ix.watchFailure
	}
	f.watchFailure = ix.watchFailure
	if err != nil {
		status, message = discoveryError, "the workspace folder cannot be listed"
		if _, serr := os.Lstat(f.root); serr != nil {
			// The folder is gone: so are its documents.
			ix.files = map[string]*entry{}
			message = "the workspace folder is gone"
		}
	}
	if initial && err == nil {
		f.pending.add(ix.all())
		f.pendingStatus, f.pendingMessage = status, message
		return
	}
	u := update{reset: true, status: status, message: message}
	for _, c := range ix.all() {
		u.upserts = append(u.upserts, c.meta)
	}
	f.state.publish(u)
	f.pendingStatus = ""
	f.indexed = true
}

// publishBatch publishes up to BatchLimit pending changes, with the
// pending discovery once nothing is left.
func (f *Feed) publishBatch() {
	batch := f.pending.take(f.opts.BatchLimit)
	var u update
	changed := f.lastChanged
	for _, c := range batch {
		if c.meta == nil {
			u.removals = append(u.removals, docID(f.root, c.rel))
			continue
		}
		u.upserts = append(u.upserts, c.meta)
		// changedId: a live edit of a non-binary file, newer than the last
		// one published; the newest of the batch when there are several.
		if c.live && c.meta.Kind != KindBinary && c.meta.Revision > changed {
			u.changedID, changed = c.meta.ID, c.meta.Revision
		}
	}
	f.lastChanged = changed
	if f.pending.len() == 0 && f.pendingStatus != "" {
		u.status, u.message = f.pendingStatus, f.pendingMessage
		f.pendingStatus, f.pendingMessage = "", ""
		f.indexed = true
	}
	f.state.publish(u)
	if len(batch) > 0 && f.indexed {
		f.signal(f.refreshReq)
	}
}

// signal makes a non-blocking request on a capacity-1 channel.
func (f *Feed) signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// wait waits d or until ctx ends, reporting whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// pendingQueue holds settled changes not yet published, one per path (the
// latest wins), in the order paths first changed.
type pendingQueue struct {
	order []string
	byRel map[string]change
}

func (q *pendingQueue) len() int { return len(q.order) }

func (q *pendingQueue) add(cs []change) {
	for _, c := range cs {
		if _, ok := q.byRel[c.rel]; !ok {
			q.order = append(q.order, c.rel)
		}
		q.byRel[c.rel] = c
	}
}

func (q *pendingQueue) take(n int) []change {
	n = min(n, len(q.order))
	out := make([]change, n)
	for i, rel := range q.order[:n] {
		out[i] = q.byRel[rel]
		delete(q.byRel, rel)
	}
	q.order = q.order[n:]
	return out
}

func (q *pendingQueue) clear() {
	q.order = nil
	clear(q.byRel)
}
