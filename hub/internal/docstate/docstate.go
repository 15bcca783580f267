// Package docstate is the document reducer: what a workspace child's
// stream of DocumentUpdate frames (api/openapi.yaml: DocumentSnapshot and
// DocumentPatch) adds up to, kept so that a live subscriber who joins late
// or falls behind is sent one snapshot rather than a replay.
//
// It is a mechanism with no domain types: bytes in (one update, raw JSON),
// an Outcome and bytes out (the materialized snapshot). The live broker
// (hub/live) owns one State per document upstream. An update is validated
// whole before anything changes, so whatever a compromised or buggy child
// sends, a refused update leaves the state as it was (FuzzDocStateApply).
package docstate

import "encoding/json"

// State is the materialized state of one document upstream: what the
// workspace child's DocumentUpdate frames (api/openapi.yaml: DocumentSnapshot
// and DocumentPatch) add up to, so a subscriber that joins late or falls
// behind gets one snapshot instead of a replay of raw frames.
//
// The rules are the earlier system's shared reducer (Hub and browser alike):
//   - any update whose epoch is empty or whose revision is not a safe
//     integer ≥ 0 is a resync;
//   - a snapshot of another epoch (or onto no state) replaces everything,
//     revisions restarting; of the same epoch it must have the same context
//     (compareTarget, scope), is ignored below the current revision and
//     replaces the state at or above it;
//   - a patch needs a state of its epoch and context and previousRevision <
//     revision; at or below the current revision it is ignored (duplicates
//     and old patches are harmless); otherwise previousRevision must be the
//     current revision (revisions are not contiguous: never "previous + 1");
//   - an update is validated whole before anything changes, so a resync or
//     an ignored update leaves the state exactly as it was.
//
// Costs: applying a patch is O(size of the patch); snapshot is O(corpus)
// but cached until the next applied update. A State is not safe for
// concurrent use; its owner (the live broker) serializes calls.
type State struct {
	epoch    string // "" while empty
	revision int64
	ctx      docContext
	header   docHeader
	roots    []*docRoot          // in the order the last snapshot or roots replacement gave
	byID     map[string]*docRoot // the same roots by id
	encoded  []byte              // snapshot's cache; nil when stale
}

// Outcome is what Apply did with an update.
type Outcome int

// The outcomes of Apply.
const (
	Applied Outcome = iota // the state changed (or was replaced)
	Ignored                // an old snapshot/patch: harmless, state unchanged
	Resync                 // cannot apply: state unchanged; the caller reopens the upstream
)

// String names the outcome, so failures read as words.
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Ignored:
		return "ignored"
	case Resync:
		return "resync"
	}
	return "Outcome(?)"
}

// docHeader holds the snapshot's header fields as JSON, verbatim: the
// reducer decides when each one changes but never reinterprets them, so a
// materialized snapshot equals the last snapshot plus the patches'
// effects. Optional fields are nil when absent.
type docHeader struct {
	epoch                json.RawMessage
	discovery            json.RawMessage
	repositoryState      json.RawMessage
	latestChange         json.RawMessage // optional
	workspaceAPIRevision json.RawMessage
	repositories         json.RawMessage
	compareTarget        json.RawMessage
	initialFollow        json.RawMessage
	defaultDocumentID    json.RawMessage
	changedID            json.RawMessage
	generatedAt          json.RawMessage
	build                json.RawMessage
	scope                json.RawMessage
	unscopedFingerprint  json.RawMessage // optional in a snapshot
	terminal             json.RawMessage // optional
}

// docRoot is one root group. Its docs are kept in a map, so a patch
// touches only its own entries; the relativePath order a snapshot needs is
// maintained lazily (see sortedDocs in docstate_snapshot.go).
type docRoot struct {
	id          string
	idJSON      json.RawMessage
	label       json.RawMessage
	path        json.RawMessage
	hiddenCount json.RawMessage
	docs        map[string]*docEntry // by document id
	size        int                  // the total length of the docs' JSON

	order   []*docEntry // sorted when last ordered; may hold dead entries
	fresh   []*docEntry // upserted since; may hold dead entries
	changed bool        // order is out of date
	lost    bool        // order and fresh were dropped: rebuild from docs
}

// docEntry is one DocumentMeta: its JSON verbatim, and the fields the
// reducer interprets.
type docEntry struct {
	raw          json.RawMessage
	id           string
	rootID       string
	relativePath string
	revision     int64
	hasRevision  bool // the optional revision is present
	badRevision  bool // present, but not a safe integer ≥ 0
	dead         bool // removed or replaced since it was put in order or fresh
}

// docKey names a document root-qualified: the same id may live in two
// roots, and removals name the root.
type docKey struct{ root, id string }

// head reports the state's epoch and revision (ok false when empty).
func (d *State) head() (epoch string, revision int64, ok bool) {
	return d.epoch, d.revision, d.epoch != ""
}

// Apply validates the whole update (raw JSON of one DocumentUpdate) before
// changing anything, then applies it.
func (d *State) Apply(update []byte) Outcome {
	u, err := decodeUpdate(update)
	if err != nil {
		return Resync
	}
	rev, ok := parseRevision(u.Revision)
	if u.Epoch.v == "" || !ok {
		return Resync
	}
	switch u.Kind {
	case "snapshot":
		return d.applySnapshot(u, rev)
	case "patch":
		return d.applyPatch(u, rev)
	}
	return Resync
}

// applySnapshot replaces the state with a snapshot, unless it is an old
// one of the current epoch.
func (d *State) applySnapshot(u *updateWire, rev int64) Outcome {
	ctx, ok := u.context()
	if !ok {
		return Resync
	}
	// Another epoch replaces the state whatever its context. An old
	// snapshot of this epoch is ignored before its insides are examined:
	// it could not change anything anyway.
	if d.epoch != "" && u.Epoch.v == d.epoch {
		if ctx != d.ctx {
			return Resync
		}
		if rev < d.revision {
			return Ignored
		}
	}
	if !u.snapshotComplete() {
		return Resync
	}
	roots := make([]*docRoot, 0, len(u.Roots))
	byID := make(map[string]*docRoot, len(u.Roots))
	for i := range u.Roots {
		rw := &u.Roots[i]
		if _, dup := byID[rw.ID.v]; dup || rw.Docs == nil {
			return Resync
		}
		r := &docRoot{docs: make(map[string]*docEntry, len(rw.Docs)), order: rw.Docs}
		r.setHeader(rw)
		for _, e := range rw.Docs {
			if e == nil || e.rootID != r.id || e.badRevision || (e.hasRevision && e.revision > rev) {
				return Resync
			}
			if _, dup := r.docs[e.id]; dup {
				return Resync
			}
			r.docs[e.id] = e
			r.size += len(e.raw)
		}
		r.sortOrder()
		roots = append(roots, r)
		byID[r.id] = r
	}
	*d = State{
		epoch:    u.Epoch.v,
		revision: rev,
		ctx:      ctx,
		roots:    roots,
		byID:     byID,
		header: docHeader{
			epoch:                u.Epoch.raw,
			discovery:            u.Discovery,
			repositoryState:      u.RepositoryState,
			latestChange:         u.LatestChange,
			workspaceAPIRevision: u.WorkspaceAPIRevision,
			repositories:         u.Repositories,
			compareTarget:        u.CompareTarget.raw,
			initialFollow:        u.InitialFollow,
			defaultDocumentID:    u.DefaultDocumentID,
			changedID:            u.ChangedID.raw,
			generatedAt:          u.GeneratedAt,
			build:                u.Build,
			scope:                u.Scope.raw,
			unscopedFingerprint:  u.UnscopedFingerprint,
			terminal:             u.Terminal,
		},
	}
	return Applied
}

// applyPatch checks a patch against the state and the whole batch, then
// applies it: roots, removals, upserts, header.
func (d *State) applyPatch(u *updateWire, rev int64) Outcome {
	if d.epoch == "" || u.Epoch.v != d.epoch {
		return Resync
	}
	if ctx, ok := u.context(); !ok || ctx != d.ctx {
		return Resync
	}
	prev, ok := parseRevision(u.PreviousRevision)
	if !ok || rev <= prev {
		return Resync
	}
	if rev <= d.revision {
		return Ignored
	}
	if prev != d.revision || !u.patchComplete() {
		return Resync
	}

	// The root set once the patch's roots replace it: upserts and removals
	// are checked against it, since they apply after the replacement (so a
	// removal from a root the patch drops is from an unknown root).
	var next map[string]*rootWire
	if u.Roots != nil {
		next = make(map[string]*rootWire, len(u.Roots))
		for i := range u.Roots {
			rw := &u.Roots[i]
			if _, dup := next[rw.ID.v]; dup {
				return Resync
			}
			next[rw.ID.v] = rw
		}
	}
	known := func(root string) bool {
		if next != nil {
			return next[root] != nil
		}
		return d.byID[root] != nil
	}
	upserted := make(map[docKey]bool, len(u.Upserts))
	for _, e := range u.Upserts {
		if e == nil || !known(e.rootID) || e.badRevision || (e.hasRevision && e.revision > rev) {
			return Resync
		}
		// A root the patch keeps still holds its docs; one it adds has none.
		// A file revision can only be compared with another: the field is
		// optional, and a doc without one may replace one with it.
		if r := d.byID[e.rootID]; r != nil {
			if cur := r.docs[e.id]; cur != nil && cur.hasRevision && e.hasRevision && e.revision < cur.revision {
				return Resync
			}
		}
		k := docKey{e.rootID, e.id}
		if upserted[k] {
			return Resync
		}
		upserted[k] = true
	}
	for _, rm := range u.Removals {
		if !known(rm.RootID) || upserted[docKey{rm.RootID, rm.ID}] {
			return Resync
		}
	}

	// Valid: apply.
	if u.Roots != nil {
		roots := make([]*docRoot, 0, len(u.Roots))
		byID := make(map[string]*docRoot, len(u.Roots))
		for i := range u.Roots {
			rw := &u.Roots[i]
			r := d.byID[rw.ID.v] // kept with its docs; dropped roots lose theirs
			if r == nil {
				r = &docRoot{docs: map[string]*docEntry{}}
			}
			r.setHeader(rw)
			roots = append(roots, r)
			byID[r.id] = r
		}
		d.roots, d.byID = roots, byID
	}
	for _, rm := range u.Removals {
		d.byID[rm.RootID].remove(rm.ID)
	}
	for _, e := range u.Upserts {
		d.byID[e.rootID].upsert(e)
	}
	h := &d.header
	d.revision = rev
	h.generatedAt = u.GeneratedAt
	h.unscopedFingerprint = u.UnscopedFingerprint
	h.changedID = u.ChangedID.raw
	if u.ChangedID.v != nil {
		h.latestChange = latestChangeJSON(u.ChangedID.raw, rev)
	}
	if u.DefaultDocumentID != nil { // null is present: it clears the default
		h.defaultDocumentID = u.DefaultDocumentID
	}
	if present(u.Discovery) {
		h.discovery = u.Discovery
	}
	if present(u.Repositories) {
		h.repositories = u.Repositories
	}
	if present(u.RepositoryState) {
		h.repositoryState = u.RepositoryState
	}
	d.encoded = nil
	return Applied
}

// setHeader takes a root's own fields (not its docs) from the wire.
func (r *docRoot) setHeader(rw *rootWire) {
	r.id, r.idJSON = rw.ID.v, rw.ID.raw
	r.label, r.path, r.hiddenCount = rw.Label, rw.Path, rw.HiddenCount
}

// remove drops the document id, if the root has it.
func (r *docRoot) remove(id string) {
	e := r.docs[id]
	if e == nil {
		return
	}
	e.dead = true
	delete(r.docs, id)
	r.size -= len(e.raw)
	r.changed = true
}

// upsert adds e or replaces the document of its id.
func (r *docRoot) upsert(e *docEntry) {
	r.remove(e.id)
	r.docs[e.id] = e
	r.size += len(e.raw)
	r.changed = true
	if r.lost {
		return
	}
	r.fresh = append(r.fresh, e)
	// Bound the garbage when nobody asks for a snapshot: once more entries
	// wait than are ordered, drop both (O(1)) and let the next snapshot
	// sort the docs afresh.
	if len(r.fresh) > len(r.order)+freshSlack {
		r.order, r.fresh, r.lost = nil, nil, true
	}
}

// freshSlack is how many upserts may wait beyond the ordered entries'
// count, so small roots do not lose their order at every upsert.
const freshSlack = 256

// latestChangeJSON encodes DocumentLatestChange from the JSON string id.
func latestChangeJSON(id json.RawMessage, rev int64) json.RawMessage {
	b := make([]byte, 0, len(id)+40)
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"revision":`...)
	b = appendInt(b, rev)
	return append(b, '}')
}
