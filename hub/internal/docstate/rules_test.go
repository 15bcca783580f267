package docstate

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/matryer/is"
)

// The reducer's rules (the earlier system's, as the research notes pin
// them), one row per rule or pinned edge case; runDocRules also checks that
// nothing but an applied update changes the state.

// Any update: an empty epoch or a revision that is not a safe integer ≥ 0
// is a resync, and so is anything that is not a DocumentUpdate at all.
func TestDocStateUpdateRules(t *testing.T) {
	rev := func(raw string) json.RawMessage { return json.RawMessage(raw) }
	runDocRules(t, []docRule{
		{name: "a snapshot with an empty epoch", update: set(base(), "epoch", ""), want: Resync},
		{name: "a snapshot without an epoch", update: set(base(), "epoch", drop), want: Resync},
		{name: "an epoch that is not a string", update: set(base(), "epoch", 7), want: Resync},
		{name: "a negative revision", update: set(base(), "revision", -1), want: Resync},
		{name: "a fractional revision", update: set(base(), "revision", rev("10.5")), want: Resync},
		{name: "a revision past the safe integers", update: set(base(), "revision", rev("9007199254740992")), want: Resync},
		{name: "a revision that is a string", update: set(base(), "revision", "10"), want: Resync},
		{name: "a null revision", update: set(base(), "revision", nil), want: Resync},
		{name: "no revision", update: set(base(), "revision", drop), want: Resync},
		{name: "the largest safe revision", update: set(base(), "revision", rev("9007199254740991")), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.Revision, int64(9007199254740991)) // kept exactly
			}},
		{name: "a revision written as a float is an integer", update: set(base(), "revision", rev("10.0")), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.Revision, int64(10)) // 10.0 is 10, as in JavaScript
			}},
		{name: "a patch with an empty epoch", setup: []obj{base()},
			update: set(patchOf(epochA, 10, 11, nil), "epoch", ""), want: Resync},
		{name: "a patch with an invalid revision", setup: []obj{base()},
			update: set(patchOf(epochA, 10, 11, nil), "revision", rev("11.5")), want: Resync},
		{name: "not JSON", setup: []obj{base()}, update: []byte(`{"kind":"patch",`), want: Resync},
		{name: "not an object", setup: []obj{base()}, update: []byte(`[1]`), want: Resync},
		{name: "null", setup: []obj{base()}, update: []byte(`null`), want: Resync},
		{name: "an unknown kind", setup: []obj{base()}, update: set(patchOf(epochA, 10, 11, nil), "kind", "delta"), want: Resync},
		{name: "a changedId of the wrong type", update: set(base(), "changedId", 5), want: Resync},
		{name: "a scope that is not an object", update: set(base(), "scope", "folder"), want: Resync},
	})
}

// Snapshots: replace on a new epoch, resync on a new context, ignore an
// older one, and reject one that contradicts itself.
func TestDocStateSnapshotRules(t *testing.T) {
	newer := func(rev int64) obj { // base's epoch and context, one doc fewer
		return snapshotOf(epochA, rev, rootOf(rootA, docOf(rootA, "a.md", 3)))
	}
	runDocRules(t, []docRule{
		{name: "onto no state it applies", update: base(), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.Kind, "snapshot")                                                         // a snapshot
				is.Equal([]any{v.Epoch, v.Revision}, []any{epochA, int64(10)})                       // its head
				is.Equal(v.files(), []string{"/ws: a.md@3", "/ws: docs/x.md@4", "/ws/docs: x.md@4"}) // its docs
			}},
		{name: "another epoch replaces everything and revisions restart", setup: []obj{base()},
			update: snapshotOf(epochB, 0, rootOf(rootC, docOf(rootC, "n.md", 0))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal([]any{v.Epoch, v.Revision}, []any{epochB, int64(0)}) // the new epoch from zero
				is.Equal(v.files(), []string{"/other: n.md@0"})               // the old inventory is gone
			}},
		{name: "another epoch may bring another context", setup: []obj{base()},
			update: set(snapshotOf(epochB, 3), "compareTarget", "last-commit"), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.CompareTarget, "last-commit") // replaced whole
			}},
		{name: "the same epoch with another compareTarget", setup: []obj{base()},
			update: set(newer(11), "compareTarget", "last-commit"), want: Resync},
		{name: "the same epoch with another scope", setup: []obj{base()},
			update: set(newer(11), "scope", obj{"kind": "file", "documentId": rootA + "/a.md"}), want: Resync},
		{name: "the same epoch with a lower revision is ignored", setup: []obj{base()}, update: newer(9), want: Ignored},
		{name: "the same epoch with the same revision replaces", setup: []obj{base()}, update: newer(10), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), []string{"/ws: a.md@3"}) // the new inventory
			}},
		{name: "the same epoch with a higher revision replaces", setup: []obj{base()}, update: newer(12), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.Revision, int64(12))              // the new head
				is.Equal(v.files(), []string{"/ws: a.md@3"}) // the new inventory
			}},
		{name: "an old snapshot is ignored without being examined", setup: []obj{base()},
			update: snapshotOf(epochA, 9, rootOf(rootA), rootOf(rootA)), want: Ignored},
		{name: "duplicate root ids", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA), rootOf(rootA)), want: Resync},
		{name: "a doc whose rootId is not its root's", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, docOf(rootB, "x.md", 1))), want: Resync},
		{name: "a duplicate doc id within a root", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, docOf(rootA, "a.md", 1), docOf(rootA, "a.md", 2))), want: Resync},
		{name: "one doc id in two roots", update: snapshotOf(epochA, 11,
			rootOf(rootA, docOf(rootA, "docs/x.md", 1)), rootOf(rootB, docOf(rootB, "x.md", 2))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.Roots[0].Docs[0].ID, v.Roots[1].Docs[0].ID) // the same id, once per root
			}},
		{name: "a negative doc revision", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, docOf(rootA, "a.md", 3), set(docOf(rootA, "b.md", 1), "revision", -2))), want: Resync},
		{name: "a fractional doc revision", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, set(docOf(rootA, "a.md", 1), "revision", json.RawMessage("1.5")))), want: Resync},
		{name: "a doc revision that is a string", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, set(docOf(rootA, "a.md", 1), "revision", "1"))), want: Resync},
		{name: "a null doc revision", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, set(docOf(rootA, "a.md", 1), "revision", nil))), want: Resync},
		{name: "a doc revision above the snapshot's", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, docOf(rootA, "a.md", 12))), want: Resync},
		{name: "a doc revision equal to the snapshot's", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, docOf(rootA, "a.md", 11))), want: Applied},
		{name: "a doc without a revision", update: snapshotOf(epochA, 11, rootOf(rootA, docOf(rootA, "a.md", -1))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), []string{"/ws: a.md@-"}) // kept without one
			}},
		{name: "a doc id that is not a string", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, set(docOf(rootA, "a.md", 1), "id", 5))), want: Resync},
		{name: "a null doc", setup: []obj{base()},
			update: snapshotOf(epochA, 11, rootOf(rootA, nil)), want: Resync},
		{name: "a root without docs", setup: []obj{base()},
			update: snapshotOf(epochA, 11, set(rootOf(rootA), "docs", drop)), want: Resync},
		{name: "a missing required field", setup: []obj{base()}, update: set(newer(11), "build", drop), want: Resync},
		{name: "docs are sorted by relativePath", update: snapshotOf(epochA, 11, rootOf(rootA,
			docOf(rootA, "b.md", 1), docOf(rootA, "a/z.md", 1), docOf(rootA, "C.md", 1), docOf(rootA, "a.md", 1))), want: Applied,
			check: func(is *is.I, v docView) {
				// Byte order: upper case before lower, "." (0x2e) before "/" (0x2f).
				is.Equal(v.files(), []string{"/ws: C.md@1", "/ws: a.md@1", "/ws: a/z.md@1", "/ws: b.md@1"}) // sorted by relativePath
			}},
	})
}

// Failure messages name outcomes rather than print numbers.
func TestDocOutcomeString(t *testing.T) {
	is := is.New(t)
	is.Equal(fmt.Sprint(Applied, Ignored, Resync), "applied ignored resync") // readable outcomes
}

// The patch rules of the earlier system's reducer, one row per rule; every
// row but the first starts from base (epochA, revision 10: /ws a.md@3 and
// docs/x.md@4, /ws/docs x.md@4).
func TestDocStatePatchRules(t *testing.T) {
	a := func(rev int64) obj { return docOf(rootA, "a.md", rev) }
	n := func(rev int64) obj { return docOf(rootA, "n.md", rev) }
	x := rootA + "/docs/x.md" // in both roots
	unchangedFiles := []string{"/ws: a.md@3", "/ws: docs/x.md@4", "/ws/docs: x.md@4"}
	b := []obj{base()}
	runDocRules(t, []docRule{
		// Revisions and context.
		{name: "onto no state", update: patchOf(epochA, 10, 11, nil), want: Resync},
		{name: "another epoch", setup: b, update: patchOf(epochB, 10, 11, nil), want: Resync},
		{name: "another compareTarget", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "compareTarget", "last-commit"), want: Resync},
		{name: "another scope", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "scope", obj{"kind": "file", "documentId": rootA + "/a.md"}), want: Resync},
		{name: "a negative previousRevision", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "previousRevision", -1), want: Resync},
		{name: "a fractional previousRevision", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "previousRevision", json.RawMessage("9.5")), want: Resync},
		{name: "no previousRevision", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "previousRevision", drop), want: Resync},
		{name: "a revision equal to previousRevision", setup: b, update: patchOf(epochA, 10, 10, nil), want: Resync},
		{name: "a revision below previousRevision, even an old one", setup: b, update: patchOf(epochA, 10, 9, nil), want: Resync},
		{name: "a revision at the current one is ignored", setup: b, update: patchOf(epochA, 9, 10, docs(a(10))), want: Ignored},
		{name: "a revision below the current one is ignored", setup: b, update: patchOf(epochA, 5, 8, docs(a(8))), want: Ignored},
		{name: "a gap: previousRevision is not the current revision", setup: b, update: patchOf(epochA, 11, 12, nil), want: Resync},
		{name: "revisions need not be contiguous", setup: b, update: patchOf(epochA, 10, 25, docs(n(20))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.Revision, int64(25))                                                                      // the patch's revision
				is.Equal(v.files(), []string{"/ws: a.md@3", "/ws: docs/x.md@4", "/ws: n.md@20", "/ws/docs: x.md@4"}) // n.md added in order
			}},
		{name: "a missing required field", setup: b,
			update: set(patchOf(epochA, 10, 11, docs(n(11))), "unscopedFingerprint", drop), want: Resync},
		{name: "null upserts", setup: b, update: set(patchOf(epochA, 10, 11, nil), "upserts", nil), want: Resync},

		// Upserts.
		{name: "an upsert into an unknown root", setup: b,
			update: patchOf(epochA, 10, 11, docs(docOf(rootC, "n.md", 11))), want: Resync},
		{name: "an upsert into a root the patch adds", setup: b,
			update: set(patchOf(epochA, 10, 11, docs(docOf(rootC, "n.md", 11))), "roots",
				[]obj{plainRoot(rootA, "ws"), plainRoot(rootB, "docs"), plainRoot(rootC, "other")}), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), append(unchangedFiles, "/other: n.md@11")) // kept roots keep their docs
			}},
		{name: "an upsert into a root the patch drops", setup: b,
			update: set(patchOf(epochA, 10, 11, docs(docOf(rootB, "n.md", 11))), "roots", []obj{plainRoot(rootA, "ws")}), want: Resync},
		{name: "a negative doc revision", setup: b, update: patchOf(epochA, 10, 11, docs(n(11), set(a(11), "revision", -1))), want: Resync},
		{name: "a doc revision that is a string", setup: b, update: patchOf(epochA, 10, 11, docs(set(a(11), "revision", "11"))), want: Resync},
		{name: "a doc revision above the patch's", setup: b, update: patchOf(epochA, 10, 11, docs(a(12))), want: Resync},
		{name: "a doc revision below the doc's current one", setup: b, update: patchOf(epochA, 10, 11, docs(a(2))), want: Resync},
		{name: "a doc revision equal to the doc's current one", setup: b, update: patchOf(epochA, 10, 11, docs(set(a(3), "mtimeMs", 9))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), unchangedFiles) // the same revision, updated in place
			}},
		{name: "a doc without a revision replaces one with", setup: b, update: patchOf(epochA, 10, 11, docs(a(-1))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files()[0], "/ws: a.md@-") // the revision is optional
			}},
		{name: "duplicate upserts", setup: b, update: patchOf(epochA, 10, 11, docs(n(11), a(11), n(11))), want: Resync},
		{name: "one id upserted into two roots", setup: b,
			update: patchOf(epochA, 10, 11, docs(docOf(rootA, "docs/x.md", 11), docOf(rootB, "x.md", 11))), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), []string{"/ws: a.md@3", "/ws: docs/x.md@11", "/ws/docs: x.md@11"}) // both updated
			}},
		{name: "a null upsert", setup: b, update: patchOf(epochA, 10, 11, docs(n(11), nil)), want: Resync},

		// Removals.
		{name: "a removal from an unknown root", setup: b,
			update: patchOf(epochA, 10, 11, nil, removal(rootC, rootC+"/a.md")), want: Resync},
		{name: "a removal from a root the patch drops", setup: b,
			update: set(patchOf(epochA, 10, 11, nil, removal(rootB, x)), "roots", []obj{plainRoot(rootA, "ws")}), want: Resync},
		{name: "a removal of a doc the patch also upserts", setup: b,
			update: patchOf(epochA, 10, 11, docs(a(11)), removal(rootA, rootA+"/a.md")), want: Resync},
		{name: "removals are root-qualified", setup: b,
			update: patchOf(epochA, 10, 11, nil, removal(rootB, x)), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), []string{"/ws: a.md@3", "/ws: docs/x.md@4"}) // the same id under /ws survives
			}},
		{name: "a removal in one root and an upsert of the id in another", setup: b,
			update: patchOf(epochA, 10, 11, docs(docOf(rootA, "docs/x.md", 11)), removal(rootB, x)), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), []string{"/ws: a.md@3", "/ws: docs/x.md@11"}) // moved between roots
			}},
		{name: "a removal of an unknown doc does nothing", setup: b,
			update: patchOf(epochA, 10, 11, nil, removal(rootA, rootA+"/gone.md"), removal(rootA, rootA+"/gone.md")), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), unchangedFiles) // nothing to remove
				is.Equal(v.Revision, int64(11))     // yet the revision advances
			}},

		// Roots.
		{name: "duplicate roots", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "roots", []obj{plainRoot(rootA, "ws"), plainRoot(rootA, "ws")}), want: Resync},
		{name: "roots replace the root set", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "roots", []obj{plainRoot(rootB, "renamed"), plainRoot(rootC, "other")}), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(len(v.Roots), 2)                                                // the patch's roots
				is.Equal([]string{v.Roots[0].ID, v.Roots[1].ID}, []string{rootB, rootC}) // in the patch's order
				is.Equal(v.Roots[0].Label, "renamed")                                    // a kept root takes the new label
				is.Equal(v.files(), []string{"/ws/docs: x.md@4"})                        // a dropped root loses its docs
			}},
		{name: "empty roots drop every root", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "roots", []obj{}), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(len(v.Roots), 0) // an empty root set
			}},
		{name: "no roots leave the root set alone", setup: b, update: patchOf(epochA, 10, 11, nil), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), unchangedFiles) // unchanged
			}},

		// A batch is validated whole.
		{name: "a malformed tail", setup: b,
			update: patchOf(epochA, 10, 11, docs(n(11), docOf(rootA, "o.md", 11), a(12)), removal(rootA, x)), want: Resync},
		{name: "a truncated batch", setup: b,
			update: []byte(`{"kind":"patch","epoch":"epoch-a","previousRevision":10,"revision":11,"upserts":[{"id":"/ws/n.md","rootId":"/ws"`), want: Resync},
		{name: "a removal of an unknown root after valid upserts", setup: b,
			update: patchOf(epochA, 10, 11, docs(n(11)), removal(rootA, x), removal(rootC, rootC+"/a.md")), want: Resync},

		// The header.
		{name: "a live edit sets changedId and latestChange", setup: b,
			update: set(patchOf(epochA, 10, 11, docs(a(11))), "changedId", rootA+"/a.md"), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(*v.ChangedID, rootA+"/a.md")                              // the edit
				is.Equal(*v.LatestChange, docLatest{rootA + "/a.md", 11})          // at the patch's revision
				is.Equal(v.GeneratedAt, int64(1011))                               // always updated
				is.Equal(v.UnscopedFingerprint, epochA+":11")                      // always updated
				is.Equal(*v.DefaultDocumentID, rootA+"/a.md")                      // absent: kept
				is.Equal(string(v.Discovery), `{"discovered":3,"status":"ready"}`) // absent: kept
			}},
		{name: "a null defaultDocumentId clears it", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "defaultDocumentId", nil), want: Applied,
			check: func(is *is.I, v docView) {
				is.True(v.DefaultDocumentID == nil) // present and null
			}},
		{name: "a defaultDocumentId replaces it", setup: b,
			update: set(patchOf(epochA, 10, 11, nil), "defaultDocumentId", x), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(*v.DefaultDocumentID, x) // the new default
			}},
		{name: "repository and discovery updates leave files alone and keep latestChange",
			setup: []obj{base(), set(patchOf(epochA, 10, 11, docs(a(11))), "changedId", rootA+"/a.md")},
			update: set(patchOf(epochA, 11, 12, nil),
				"discovery", obj{"status": "recovering", "discovered": 3},
				"repositoryState", obj{"generation": 1, "status": "ready"},
				"repositories", []obj{repositoryOf(rootA)}), want: Applied,
			check: func(is *is.I, v docView) {
				is.Equal(v.files(), []string{"/ws: a.md@11", "/ws: docs/x.md@4", "/ws/docs: x.md@4"}) // files untouched
				is.True(v.ChangedID == nil)                                                           // not a live edit
				is.Equal(*v.LatestChange, docLatest{rootA + "/a.md", 11})                             // the edit is remembered
				is.Equal(string(v.Discovery), `{"discovered":3,"status":"recovering"}`)               // updated
				is.Equal(string(v.RepositoryState), `{"generation":1,"status":"ready"}`)              // updated
				is.Equal(len(mustRepositories(is, v)), 1)                                             // updated
			}},
	})
}

// repositoryOf is a valid RepositorySnapshot of a Git root.
func repositoryOf(root string) obj {
	return obj{
		"id": root, "rootPath": root, "label": "ws", "watchedRootIds": []string{root},
		"metadata": obj{"branch": "main", "detached": false}, "status": "available",
		"base": obj{"mode": "head", "compareTarget": "base"},
		"changedFiles": []obj{{"path": "a.md", "oldPath": nil, "status": "modified",
			"additions": 1, "deletions": 0, "hunks": []any{}}},
		"gitIgnoredFiles": []string{}, "configWarnings": []any{}, "message": nil,
		"commitLog": []obj{{"sha": "0123456", "subject": "Start <here> & now", "message": "",
			"author": "Ann", "relativeTime": "2 hours ago", "committedAtMs": 1}},
	}
}

func mustRepositories(is *is.I, v docView) []json.RawMessage {
	var repos []json.RawMessage
	is.NoErr(json.Unmarshal(v.Repositories, &repos)) // repositories is an array
	return repos
}
