package docstate

import (
	"cmp"
	"encoding/json"
	"slices"
)

// Snapshot returns the state encoded as a DocumentSnapshot (kind
// "snapshot"), or nil when there is no state yet. The result is cached
// until the next applied update, and must not be modified by callers (it is
// shared between streams).
//
// Its fields come in the contract's order (the child's too), each as the
// last update that set it wrote it; roots in the order the last snapshot or
// roots replacement gave; docs sorted within each root by relativePath.
func (d *State) Snapshot() []byte {
	if d.epoch == "" {
		return nil
	}
	if d.encoded != nil {
		return d.encoded
	}
	h := &d.header
	size := 512 + len(h.discovery) + len(h.repositoryState) + len(h.latestChange) +
		len(h.repositories) + len(h.build) + len(h.scope) + len(h.unscopedFingerprint) +
		len(h.epoch) + len(h.defaultDocumentID) + len(h.changedID)
	for _, r := range d.roots {
		size += 64 + len(r.idJSON) + len(r.label) + len(r.path) + len(r.hiddenCount) + r.size + len(r.docs)
	}
	b := make([]byte, 0, size)
	b = append(b, `{"kind":"snapshot","epoch":`...)
	b = append(b, h.epoch...)
	b = append(b, `,"revision":`...)
	b = appendInt(b, d.revision)
	b = appendField(b, "discovery", h.discovery)
	b = appendField(b, "repositoryState", h.repositoryState)
	if h.latestChange != nil {
		b = appendField(b, "latestChange", h.latestChange)
	}
	b = appendField(b, "workspaceApiRevision", h.workspaceAPIRevision)
	b = append(b, `,"roots":[`...)
	for i, r := range d.roots {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = append(b, r.idJSON...)
		b = appendField(b, "label", r.label)
		b = appendField(b, "path", r.path)
		b = append(b, `,"docs":[`...)
		for j, e := range r.sortedDocs() {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, e.raw...)
		}
		b = append(b, ']')
		b = appendField(b, "hiddenCount", r.hiddenCount)
		b = append(b, '}')
	}
	b = append(b, ']')
	b = appendField(b, "repositories", h.repositories)
	b = appendField(b, "compareTarget", h.compareTarget)
	b = appendField(b, "initialFollow", h.initialFollow)
	b = appendField(b, "defaultDocumentId", h.defaultDocumentID)
	b = appendField(b, "changedId", h.changedID)
	b = appendField(b, "generatedAt", h.generatedAt)
	b = appendField(b, "build", h.build)
	b = appendField(b, "scope", h.scope)
	if h.unscopedFingerprint != nil {
		b = appendField(b, "unscopedFingerprint", h.unscopedFingerprint)
	}
	if h.terminal != nil {
		b = appendField(b, "terminal", h.terminal)
	}
	b = append(b, '}')
	d.encoded = b
	return b
}

// appendField appends `,"name":value`; names are plain ASCII.
func appendField(b []byte, name string, value json.RawMessage) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	return append(b, value...)
}

// compareDocs is the docs' order within a root: by relativePath, in Go's
// string (byte) order, then by id so the order is total. The earlier
// system sorted with a locale compare (localeCompare); byte order is the
// workspace child's own order (adapters/child/docfeed), needs no locale
// tables, and agrees with it on ASCII names apart from letter case.
func compareDocs(a, b *docEntry) int {
	if c := cmp.Compare(a.relativePath, b.relativePath); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// sortOrder sorts the entries a snapshot gave, which the child already
// sends sorted, so this is usually one linear check.
func (r *docRoot) sortOrder() {
	if !slices.IsSortedFunc(r.order, compareDocs) {
		slices.SortFunc(r.order, compareDocs)
	}
}

// sortedDocs returns the root's live docs in order. After a few patches it
// costs O(n + k log k) for k upserts: drop the dead entries, sort the
// fresh ones and merge them in. When too many upserts waited (lost), it
// sorts everything again.
func (r *docRoot) sortedDocs() []*docEntry {
	switch {
	case r.lost:
		r.order = make([]*docEntry, 0, len(r.docs))
		for _, e := range r.docs {
			r.order = append(r.order, e)
		}
		slices.SortFunc(r.order, compareDocs)
	case r.changed:
		add := slices.DeleteFunc(r.fresh, isDead)
		slices.SortFunc(add, compareDocs)
		r.order = mergeDocs(slices.DeleteFunc(r.order, isDead), add)
	default:
		return r.order
	}
	r.fresh, r.changed, r.lost = nil, false, false
	return r.order
}

func isDead(e *docEntry) bool { return e.dead }

// mergeDocs merges two sorted lists into a new one.
func mergeDocs(a, b []*docEntry) []*docEntry {
	if len(b) == 0 {
		return a
	}
	out := make([]*docEntry, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if compareDocs(b[0], a[0]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}
