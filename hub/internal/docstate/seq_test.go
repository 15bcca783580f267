package docstate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/matryer/is"
)

// step applies an update and checks its outcome.
func step(t *testing.T, d *State, update any, want Outcome) {
	t.Helper()
	if got := d.Apply(encode(t, update)); got != want {
		t.Fatalf("apply %s: got %v, want %v", encode(t, update), got, want)
	}
}

// A removal sent twice, removed again later, or undone by an older
// snapshot: none of them brings the entry back.
func TestDocStateDuplicatedRemovalIsIgnored(t *testing.T) {
	is := is.New(t)
	d := &State{}
	step(t, d, base(), Applied)
	gone := patchOf(epochA, 10, 11, nil, removal(rootA, rootA+"/a.md"))
	step(t, d, gone, Applied)
	want := []string{"/ws: docs/x.md@4", "/ws/docs: x.md@4"}
	is.Equal(materialize(t, d).files(), want) // a.md removed
	step(t, d, gone, Ignored)
	is.Equal(materialize(t, d).files(), want) // the duplicate changes nothing
	step(t, d, patchOf(epochA, 11, 12, nil, removal(rootA, rootA+"/a.md")), Applied)
	is.Equal(materialize(t, d).files(), want) // removing it again is harmless
	step(t, d, base(), Ignored)
	is.Equal(materialize(t, d).files(), want) // the older snapshot cannot bring it back
}

// A new epoch replaces the inventory and revisions start again; the old
// epoch's patches are foreign from then on.
func TestDocStateNewEpochRestartsRevisions(t *testing.T) {
	is := is.New(t)
	d := &State{}
	step(t, d, base(), Applied)
	step(t, d, snapshotOf(epochB, 0, rootOf(rootA)), Applied)
	step(t, d, patchOf(epochB, 0, 1, docs(docOf(rootA, "n.md", 1))), Applied)
	before := string(d.Snapshot())
	step(t, d, patchOf(epochA, 10, 11, docs(docOf(rootA, "o.md", 11))), Resync)
	step(t, d, patchOf(epochB, 2, 3, docs(docOf(rootA, "o.md", 3))), Resync)
	is.Equal(string(d.Snapshot()), before) // neither a foreign epoch nor a missing predecessor changed anything
	v := materialize(t, d)
	is.Equal([]any{v.Epoch, v.Revision}, []any{epochB, int64(1)}) // the new epoch's head
	is.Equal(v.files(), []string{"/ws: n.md@1"})                  // the new inventory only
}

// joinerPatches follow base: a live edit, a removal with an addition, a
// repository update, roots replaced, more files.
func joinerPatches() []obj {
	return []obj{
		set(patchOf(epochA, 10, 12, docs(docOf(rootA, "a.md", 11))), "changedId", rootA+"/a.md"),
		patchOf(epochA, 12, 14, docs(docOf(rootA, "m.md", 13), docOf(rootB, "y.md", 13)), removal(rootA, rootA+"/docs/x.md")),
		set(patchOf(epochA, 14, 15, nil), "repositoryState", obj{"generation": 1, "status": "ready"},
			"repositories", []obj{repositoryOf(rootA)}, "discovery", obj{"status": "ready", "discovered": 4}),
		set(patchOf(epochA, 15, 17, docs(docOf(rootC, "c.md", 16))), "roots",
			[]obj{plainRoot(rootC, "other"), plainRoot(rootA, "ws")}, "defaultDocumentId", rootC+"/c.md"),
		set(patchOf(epochA, 17, 18, docs(docOf(rootA, "b.md", 18), docOf(rootA, "a.md", 18))), "changedId", rootA+"/b.md"),
	}
}

// A joiner that takes the materialized snapshot at any point and then the
// same patches ends up identical to the original.
func TestDocStateJoinerMatchesOriginal(t *testing.T) {
	patches := joinerPatches()
	for join := range len(patches) + 1 {
		t.Run(fmt.Sprintf("joining after %d patches", join), func(t *testing.T) {
			is := is.New(t)
			orig := &State{}
			step(t, orig, base(), Applied)
			for _, p := range patches[:join] {
				step(t, orig, p, Applied)
			}
			joiner := &State{}
			step(t, joiner, bytes.Clone(orig.Snapshot()), Applied)
			for _, p := range patches[join:] {
				step(t, orig, p, Applied)
				step(t, joiner, p, Applied)
			}
			materialize(t, orig)                                         // the contract holds
			is.Equal(string(joiner.Snapshot()), string(orig.Snapshot())) // identical, byte for byte
		})
	}
}

// A JSON round trip keeps revisions: the snapshot decodes to the revisions
// applied, and re-applying it reproduces the state exactly.
func TestDocStateRoundTripKeepsRevisions(t *testing.T) {
	is := is.New(t)
	d := &State{}
	step(t, d, set(base(), "revision", json.RawMessage("9007199254740990")), Applied)
	step(t, d, patchOf(epochA, 9007199254740990, 9007199254740991, docs(docOf(rootA, "big.md", 9007199254740991))), Applied)
	v := materialize(t, d)
	is.Equal(v.Revision, int64(9007199254740991))          // the head revision, exact
	is.Equal(v.files()[0], "/ws: a.md@3")                  // small doc revisions kept
	is.Equal(v.files()[1], "/ws: big.md@9007199254740991") // large doc revisions kept exactly
	again := &State{}
	step(t, again, bytes.Clone(d.Snapshot()), Applied)
	is.Equal(string(again.Snapshot()), string(d.Snapshot())) // the round trip is the identity
	e1, r1, _ := d.head()
	e2, r2, _ := again.head()
	is.Equal([]any{e1, r1}, []any{e2, r2}) // the same head
}

// childSnapshot is a snapshot as the workspace child writes it: the
// contract's field order, docs sorted, compact, Go's HTML escapes, and the
// optional fields present.
const childSnapshot = `{"kind":"snapshot","epoch":"e","revision":7,` +
	`"discovery":{"status":"ready","discovered":2},"repositoryState":{"generation":0,"status":"pending"},` +
	`"latestChange":{"id":"/ws/b.md","revision":6},"workspaceApiRevision":24,` +
	`"roots":[{"id":"/ws","label":"ws","path":"/ws","docs":[` +
	`{"id":"/ws/a \u003cdraft\u003e.md","name":"a \u003cdraft\u003e.md","relativePath":"a \u003cdraft\u003e.md","mtimeMs":1.5,"rootId":"/ws","kind":"markdown","revision":3},` +
	`{"id":"/ws/b.md","name":"b.md","relativePath":"b.md","mtimeMs":2,"rootId":"/ws","kind":"text"}` +
	`],"hiddenCount":1}],"repositories":[],"compareTarget":"last-commit","initialFollow":true,` +
	`"defaultDocumentId":"/ws/b.md","changedId":null,"generatedAt":1700000000000,` +
	`"build":{"version":"1.0.0","branch":"main","commitSha":"abc","commitShort":"abc","release":true,"identifier":"x","bundledWebRevision":3},` +
	`"scope":{"kind":"folder"},"unscopedFingerprint":"e:2","terminal":"enabled"}`

// Fields the reducer does not interpret survive verbatim: a child's
// snapshot comes back byte for byte, and an indented one comes back
// compacted, nothing else changed.
func TestDocStateSnapshotIsVerbatim(t *testing.T) {
	is := is.New(t)
	d := &State{}
	step(t, d, []byte(childSnapshot), Applied)
	materialize(t, d)
	is.Equal(string(d.Snapshot()), childSnapshot) // the child's bytes

	var indented bytes.Buffer
	is.NoErr(json.Indent(&indented, []byte(childSnapshot), "", "  ")) // indent the fixture
	d = &State{}
	step(t, d, indented.Bytes(), Applied)
	is.Equal(string(d.Snapshot()), childSnapshot) // compacted back
}

// snapshot is cached until the next applied update, and a snapshot handed
// out earlier is never written over.
func TestDocStateSnapshotCache(t *testing.T) {
	is := is.New(t)
	d := &State{}
	is.True(d.Snapshot() == nil) // no state, no snapshot
	step(t, d, base(), Applied)
	first := d.Snapshot()
	kept := bytes.Clone(first)
	is.True(&d.Snapshot()[0] == &first[0]) // the cached encoding is shared
	step(t, d, patchOf(epochA, 9, 10, nil), Ignored)
	step(t, d, patchOf(epochA, 11, 12, nil), Resync)
	is.True(&d.Snapshot()[0] == &first[0]) // updates not applied keep the cache
	step(t, d, patchOf(epochA, 10, 11, docs(docOf(rootA, "n.md", 11))), Applied)
	is.True(!bytes.Equal(d.Snapshot(), first)) // an applied update is seen
	is.Equal(string(first), string(kept))      // the earlier snapshot is unchanged
	materialize(t, d)                          // the contract holds
}

func TestDocStateHead(t *testing.T) {
	is := is.New(t)
	d := &State{}
	_, _, ok := d.head()
	is.True(!ok) // empty at first
	step(t, d, set(base(), "epoch", ""), Resync)
	_, _, ok = d.head()
	is.True(!ok) // still empty after a resync
	step(t, d, base(), Applied)
	epoch, rev, ok := d.head()
	is.Equal([]any{epoch, rev, ok}, []any{epochA, int64(10), true}) // the snapshot's head
	step(t, d, patchOf(epochA, 10, 13, nil), Applied)
	epoch, rev, ok = d.head()
	is.Equal([]any{epoch, rev, ok}, []any{epochA, int64(13), true}) // the patch's revision
}

// The incremental order (dead entries dropped, fresh ones merged in, or
// everything sorted again once too many waited) always equals sorting the
// live docs from scratch, over a long pseudo-random run.
func TestDocStateOrderFollowsPatches(t *testing.T) {
	is := is.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	name := func() string { return fmt.Sprintf("d%02d/f%03d.md", rng.IntN(20), rng.IntN(40)) }
	live := map[string]int64{} // relativePath -> revision, the model
	d := &State{}
	step(t, d, snapshotOf(epochA, 0, rootOf(rootA)), Applied)
	rev, lost, merged := int64(0), 0, 0
	for i := range 600 {
		prev := rev
		rev += 1 + rng.Int64N(3)
		var ups, rms []obj
		touched := map[string]bool{}
		for range rng.IntN(30) {
			rel := name()
			if touched[rel] {
				continue
			}
			touched[rel] = true
			if _, ok := live[rel]; ok && rng.IntN(3) == 0 {
				rms = append(rms, removal(rootA, rootA+"/"+rel))
				delete(live, rel)
			} else {
				ups = append(ups, docOf(rootA, rel, rev))
				live[rel] = rev
			}
		}
		step(t, d, patchOf(epochA, prev, rev, ups, rms...), Applied)
		// Long quiet stretches (no snapshot taken) let upserts pile up.
		if (i/100)%2 == 0 || rng.IntN(4) == 0 {
			continue
		}
		r := d.byID[rootA]
		if r.lost {
			lost++
		} else if r.changed {
			merged++
		}
		want := []string{}
		for rel, rv := range live {
			want = append(want, fmt.Sprintf("/ws: %s@%d", rel, rv))
		}
		slices.Sort(want) // the names have one width, so the suffix cannot reorder them
		var v docView
		if i%10 == 0 {
			v = materialize(t, d) // now and then, against the contract too
		} else {
			is.NoErr(json.Unmarshal(d.Snapshot(), &v)) // the snapshot is JSON
		}
		is.Equal(v.files(), want) // the materialized docs are the model's, sorted
	}
	is.True(lost > 0 && merged > 0) // both ways of ordering were exercised
}

// A DocumentMeta is read by walking its members: whitespace, nested values,
// escapes and a number closing the object must not confuse the walk.
func TestDocEntryDecoding(t *testing.T) {
	tests := []struct {
		name, in string
		want     docEntry // raw left out
		err      bool
	}{
		{name: "compact", in: `{"id":"/r/a","rootId":"/r","relativePath":"a","revision":4}`,
			want: docEntry{id: "/r/a", rootID: "/r", relativePath: "a", revision: 4, hasRevision: true}},
		{name: "spaced, nested, escaped",
			in:   "{ \"x\" : {\"a\":[1,{\"b\":\"}]\\\"\"}]} ,\n\"id\" : \"/r/\\\"q\\\"\" , \"rootId\":\"/r\",\t\"relativePath\":\"\\u00e9\", \"revision\" : 7 }",
			want: docEntry{id: `/r/"q"`, rootID: "/r", relativePath: "é", revision: 7, hasRevision: true}},
		{name: "no revision", in: `{"id":"/r/a","rootId":"/r","relativePath":"a"}`,
			want: docEntry{id: "/r/a", rootID: "/r", relativePath: "a"}},
		{name: "an invalid revision", in: `{"revision":-3,"id":"/r/a"}`,
			want: docEntry{id: "/r/a", revision: -3, badRevision: true}},
		{name: "a null id", in: `{"id":null}`, want: docEntry{}},
		{name: "an id that is a number", in: `{"id":5}`, err: true},
		{name: "a relativePath that is an object", in: `{"relativePath":{}}`, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			var e docEntry
			err := json.Unmarshal([]byte(tt.in), &e)
			is.Equal(err != nil, tt.err) // decodes, or fails on a wrong type
			if tt.err {
				return
			}
			is.Equal(string(e.raw), tt.in) // the JSON kept as given
			e.raw = nil
			is.Equal(e, tt.want) // the interpreted fields
		})
	}
}

// The contract checks of these tests are not vacuous: a snapshot missing a
// required field fails them.
func TestDocSnapshotContractIsChecked(t *testing.T) {
	is := is.New(t)
	d := &State{}
	step(t, d, base(), Applied)
	is.NoErr(checkSnapshotContract(t, d.Snapshot())) // the materialized snapshot passes
	var v map[string]any
	is.NoErr(json.Unmarshal(d.Snapshot(), &v)) // decode it
	delete(v, "build")
	is.True(checkSnapshotContract(t, encode(t, v)) != nil) // without build it fails
}
