package docfeed

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// update is one publish: what changed since the previous one. Every
// update takes a new revision and reaches every subscriber, as a patch
// (possibly empty for its context) or, with reset, a fresh snapshot.
type update struct {
	upserts  []*documentMeta
	removals []string // document ids
	// changedID is the live, non-binary edit among upserts, or "".
	changedID string
	// status and message, when status is set, are the new discovery.
	status, message string
	// repo, when set, is a finished or starting repository refresh.
	repo *repoUpdate
	// reset makes upserts the whole corpus (a re-index): every subscriber
	// gets a snapshot instead of a patch.
	reset bool
}

// repoUpdate is the repository part of an update: the new freshness and,
// when repos is set, the new RepositorySnapshot arrays by compare target.
type repoUpdate struct {
	state repositoryState
	repos map[CompareTarget]json.RawMessage
}

// stateConfig is what a state needs of the feed's configuration.
type stateConfig struct {
	epoch, root, label      string
	build                   *BuildSummary
	apiRevision             int
	follow                  bool
	now                     func() time.Time
	queueFrames, queueBytes int
}

// state is the published document model of a feed and its subscribers,
// all under one lock. A publish applies an update and queues every
// subscriber's frame in the same critical section, and snapshots are built
// under the same lock, so what one subscriber receives is a snapshot then
// every later patch, with no gap and no overlap.
type state struct {
	cfg stateConfig
	seq *atomic.Int64 // the feed's sequence, shared with file revisions
	// done is closed with the state; waiting subscribers watch it.
	done chan struct{}

	mu                               sync.Mutex
	closed                           bool
	revision, generatedAt, corpusRev int64
	status, message                  string // discovery
	repoState                        repositoryState
	repos                            map[CompareTarget]json.RawMessage
	docs                             map[string]*documentMeta // by id
	sorted                           []*documentMeta          // docs by relativePath; nil when stale
	defaultID                        string
	latest                           *latestChange
	subs                             map[*Subscription]struct{}
	snaps                            map[Key][]byte // snapshots of the current revision
}

var emptyRepos = json.RawMessage("[]")

func newState(cfg stateConfig, seq *atomic.Int64) *state {
	return &state{
		cfg:         cfg,
		seq:         seq,
		done:        make(chan struct{}),
		generatedAt: cfg.now().UnixMilli(),
		status:      discoveryIndexing,
		repoState:   repositoryState{Status: repoPending},
		repos:       map[CompareTarget]json.RawMessage{CompareBase: emptyRepos, CompareLastCommit: emptyRepos},
		docs:        map[string]*documentMeta{},
		subs:        map[*Subscription]struct{}{},
		snaps:       map[Key][]byte{},
	}
}

func (s *state) discovery() discovery {
	return discovery{Status: s.status, Discovered: len(s.docs), Message: s.message}
}

func (s *state) fingerprint() string {
	return s.cfg.epoch + ":" + strconv.FormatInt(s.corpusRev, 10)
}

// publish applies u as the next revision and queues each subscriber's
// frame for it. It never blocks on a subscriber.
func (s *state) publish(u update) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	prev := s.revision
	oldDisc, oldDefault := s.discovery(), s.defaultID
	pinsBefore := map[string]string{}
	for sub := range s.subs {
		if sub.ctx.Scope == ScopeFile {
			pinsBefore[sub.ctx.DocumentID] = s.pinDefault(sub.ctx.DocumentID)
		}
	}

	s.revision = s.seq.Add(1)
	s.generatedAt = max(s.cfg.now().UnixMilli(), s.generatedAt+1)
	corpus := u.reset || len(u.upserts) > 0 || len(u.removals) > 0
	if u.reset {
		s.docs = make(map[string]*documentMeta, len(u.upserts))
	}
	for _, id := range u.removals {
		delete(s.docs, id)
	}
	for _, d := range u.upserts {
		s.docs[d.ID] = d
	}
	if corpus {
		s.corpusRev++
		s.sorted = nil
	}
	if u.status != "" {
		s.status, s.message = u.status, u.message
	}
	if corpus || u.status != "" {
		s.defaultID = s.newestDocument()
	}
	if u.changedID != "" {
		s.latest = &latestChange{ID: u.changedID, Revision: s.revision}
	}
	reposChanged := map[CompareTarget]bool{}
	if u.repo != nil {
		s.repoState = u.repo.state
		for t, b := range u.repo.repos {
			if !slices.Equal(s.repos[t], b) {
				reposChanged[t] = true
				s.repos[t] = b
			}
		}
	}
	clear(s.snaps)

	// Discovery reaching ready settles pins: one to a missing or binary
	// document now means nothing, so the subscriber falls back to folder
	// scope, which a patch cannot express: it gets a snapshot.
	settle := oldDisc.Status == discoveryIndexing && s.status != discoveryIndexing
	ap := applied{update: &u, prev: prev, oldDisc: oldDisc, reposChanged: reposChanged,
		defaultChanged: s.defaultID != oldDefault, pinsBefore: pinsBefore}
	frames := map[Key][]byte{}
	for sub := range s.subs {
		if u.reset || (settle && !s.pinUsable(sub.ctx)) {
			sub.ctx = s.settledKey(sub.ctx)
			sub.resnapshot()
			continue
		}
		if sub.needSnap {
			continue // its snapshot will be built at this revision or later
		}
		b, ok := frames[sub.ctx]
		if !ok {
			b = s.patch(sub.ctx, &ap)
			frames[sub.ctx] = b
		}
		sub.push(b, s.cfg.queueFrames, s.cfg.queueBytes)
	}
}

// applied is an update as applied, with what projection needs.
type applied struct {
	*update
	prev           int64
	oldDisc        discovery
	reposChanged   map[CompareTarget]bool
	defaultChanged bool
	pinsBefore     map[string]string
}

// patch projects the applied update onto a subscriber context: folder
// scope gets every change; file scope only its document's, with changedId
// and defaultDocumentId about that document alone. Both get the revision
// advance, the fingerprint, discovery and repository freshness.
func (s *state) patch(k Key, a *applied) []byte {
	p := patchFrame{
		Kind:                "patch",
		Epoch:               s.cfg.epoch,
		PreviousRevision:    a.prev,
		Revision:            s.revision,
		GeneratedAt:         s.generatedAt,
		Scope:               scopeOf(k),
		CompareTarget:       k.CompareTarget,
		UnscopedFingerprint: s.fingerprint(),
		Upserts:             []*documentMeta{},
		Removals:            []removal{},
	}
	keep := func(id string) bool { return k.Scope == ScopeFolder || id == k.DocumentID }
	for _, d := range a.upserts {
		if keep(d.ID) {
			p.Upserts = append(p.Upserts, d)
		}
	}
	for _, id := range a.removals {
		if keep(id) {
			p.Removals = append(p.Removals, removal{RootID: s.cfg.root, ID: id})
		}
	}
	if a.changedID != "" && keep(a.changedID) {
		p.ChangedID = ptr(a.changedID)
	}
	if d := s.discovery(); d != a.oldDisc {
		p.Discovery = &d
	}
	if a.repo != nil {
		p.RepositoryState = &a.repo.state
		if a.reposChanged[k.CompareTarget] {
			p.Repositories = s.repos[k.CompareTarget]
		}
	}
	switch {
	case k.Scope == ScopeFolder && a.defaultChanged:
		p.DefaultDocumentID = setID(s.defaultID)
	case k.Scope == ScopeFile:
		if now := s.pinDefault(k.DocumentID); now != a.pinsBefore[k.DocumentID] {
			p.DefaultDocumentID = setID(now)
		}
	}
	return mustJSON(p)
}

// snapshot is the whole state for a subscriber context, built once per
// context and revision. A file scope lists its pinned document only.
func (s *state) snapshot(k Key) []byte {
	if b, ok := s.snaps[k]; ok {
		return b
	}
	docs := []*documentMeta{}
	var def string
	if k.Scope == ScopeFolder {
		if s.sorted == nil {
			s.sorted = make([]*documentMeta, 0, len(s.docs))
			for _, d := range s.docs {
				s.sorted = append(s.sorted, d)
			}
			slices.SortFunc(s.sorted, func(a, b *documentMeta) int {
				return strings.Compare(a.RelativePath, b.RelativePath)
			})
		}
		docs, def = s.sorted, s.defaultID
	} else {
		if d, ok := s.docs[k.DocumentID]; ok {
			docs = append(docs, d)
		}
		def = s.pinDefault(k.DocumentID)
	}
	f := snapshotFrame{
		Kind:                 "snapshot",
		Epoch:                s.cfg.epoch,
		Revision:             s.revision,
		Discovery:            s.discovery(),
		RepositoryState:      s.repoState,
		LatestChange:         s.latest,
		WorkspaceAPIRevision: s.cfg.apiRevision,
		Roots: []rootGroup{{
			ID: s.cfg.root, Label: s.cfg.label, Path: s.cfg.root, Docs: docs,
		}},
		Repositories:        s.repos[k.CompareTarget],
		CompareTarget:       k.CompareTarget,
		InitialFollow:       s.cfg.follow,
		GeneratedAt:         s.generatedAt,
		Build:               s.cfg.build,
		Scope:               scopeOf(k),
		UnscopedFingerprint: s.fingerprint(),
	}
	if def != "" {
		f.DefaultDocumentID = ptr(def)
	}
	b := mustJSON(f)
	s.snaps[k] = b
	return b
}

// newestDocument is the default document: the newest non-binary one by
// mtimeMs, ties to the first by relativePath; "" while indexing (an
// incomplete inventory has no meaningful newest) or when there is none.
func (s *state) newestDocument() string {
	if s.status == discoveryIndexing {
		return ""
	}
	var best *documentMeta
	for _, d := range s.docs {
		if d.Kind == KindBinary {
			continue
		}
		if best == nil || d.MtimeMs > best.MtimeMs ||
			(d.MtimeMs == best.MtimeMs && d.RelativePath < best.RelativePath) {
			best = d
		}
	}
	if best == nil {
		return ""
	}
	return best.ID
}

// pinDefault is a file scope's defaultDocumentId: the pinned document once
// discovery is past indexing, unless it is missing or binary.
func (s *state) pinDefault(id string) string {
	if s.status == discoveryIndexing {
		return ""
	}
	if d, ok := s.docs[id]; ok && d.Kind != KindBinary {
		return id
	}
	return ""
}

// pinUsable reports whether a context can stay as it is: any folder
// scope, a file scope while indexing (a missing file is not yet evidence
// of anything), or a pin to a present, non-binary document.
func (s *state) pinUsable(k Key) bool {
	return k.Scope == ScopeFolder || s.status == discoveryIndexing || s.pinDefault(k.DocumentID) != ""
}

// settledKey is k, or its folder scope once its pin is unusable.
func (s *state) settledKey(k Key) Key {
	if s.pinUsable(k) {
		return k
	}
	return Key{CompareTarget: k.CompareTarget, Scope: ScopeFolder}
}

// close ends every subscription; later publishes do nothing.
func (s *state) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

func scopeOf(k Key) scopeJSON {
	if k.Scope == ScopeFile {
		return scopeJSON{Kind: ScopeFile, DocumentID: k.DocumentID}
	}
	return scopeJSON{Kind: ScopeFolder}
}

// mustJSON encodes frames, whose types cannot fail to encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("docfeed: encoding a frame: " + err.Error())
	}
	return b
}

// docID is the document id (absolute path) of a path relative to root.
func docID(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
