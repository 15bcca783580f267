package docstate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"strconv"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/matryer/is"

	apidoc "github.com/wharfhub/wharf/api"
)

// The fixtures: two nested roots, so one document id can live in both
// ("/ws/docs/x.md" is docs/x.md of rootA and x.md of rootB).
const (
	epochA = "epoch-a"
	epochB = "epoch-b"
	rootA  = "/ws"
	rootB  = "/ws/docs"
	rootC  = "/other"
)

// obj is a JSON object under construction.
type obj = map[string]any

// drop, as a value given to set, removes the field.
var drop = &struct{ drop bool }{}

// set returns a copy of o with the fields of kv (name, value, ...) set.
func set(o obj, kv ...any) obj {
	c := maps.Clone(o)
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		if kv[i+1] == drop {
			delete(c, name)
		} else {
			c[name] = kv[i+1]
		}
	}
	return c
}

// docOf is a DocumentMeta of root; rev < 0 leaves the revision out.
func docOf(root, rel string, rev int64) obj {
	d := obj{"id": root + "/" + rel, "name": path.Base(rel), "relativePath": rel,
		"mtimeMs": 1, "rootId": root, "kind": "markdown", "revision": rev}
	if rev < 0 {
		delete(d, "revision")
	}
	return d
}

// rootOf is a DocumentRootGroup.
func rootOf(id string, docs ...obj) obj {
	return obj{"id": id, "label": path.Base(id), "path": id, "docs": append([]obj{}, docs...), "hiddenCount": 0}
}

// plainRoot is a DocumentRoot, as a patch carries it.
func plainRoot(id, label string) obj {
	return obj{"id": id, "label": label, "path": id, "hiddenCount": 0}
}

// removal is an item of a patch's removals.
func removal(root, id string) obj { return obj{"rootId": root, "id": id} }

// snapshotOf is a complete, valid DocumentSnapshot in folder scope.
func snapshotOf(epoch string, rev int64, roots ...obj) obj {
	return obj{
		"kind": "snapshot", "epoch": epoch, "revision": rev,
		"discovery":            obj{"status": "ready", "discovered": 3},
		"repositoryState":      obj{"generation": 0, "status": "pending"},
		"workspaceApiRevision": 24,
		"roots":                append([]obj{}, roots...),
		"repositories":         []any{},
		"compareTarget":        "base",
		"initialFollow":        false,
		"defaultDocumentId":    rootA + "/a.md",
		"changedId":            nil,
		"generatedAt":          1000 + rev,
		"build": obj{"version": "1.0.0", "branch": "main", "commitSha": "0123456789abcdef",
			"commitShort": "0123456", "release": false, "identifier": "dev", "bundledWebRevision": 1},
		"scope":               obj{"kind": "folder"},
		"unscopedFingerprint": epoch + ":0",
	}
}

// base is the state most rows start from: epochA at revision 10.
func base() obj {
	return snapshotOf(epochA, 10,
		rootOf(rootA, docOf(rootA, "a.md", 3), docOf(rootA, "docs/x.md", 4)),
		rootOf(rootB, docOf(rootB, "x.md", 4)))
}

// patchOf is an empty, valid DocumentPatch in folder scope; upserts and
// removals, when given, are set.
func patchOf(epoch string, prev, rev int64, upserts []obj, removals ...obj) obj {
	return obj{
		"kind": "patch", "epoch": epoch, "previousRevision": prev, "revision": rev,
		"generatedAt": 1000 + rev, "scope": obj{"kind": "folder"}, "compareTarget": "base",
		"unscopedFingerprint": epoch + ":" + strconv.FormatInt(rev, 10),
		"upserts":             append([]obj{}, upserts...), "removals": append([]obj{}, removals...),
		"changedId": nil,
	}
}

// docs is a list of DocumentMeta, for patchOf.
func docs(d ...obj) []obj { return d }

// encode turns a fixture (obj) or raw bytes into an update.
func encode(t testing.TB, v any) []byte {
	t.Helper()
	if b, ok := v.([]byte); ok {
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// docContract is api/openapi.yaml, loaded once.
var docContract = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(apidoc.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

// checkSnapshotContract validates raw against the DocumentSnapshot schema.
func checkSnapshotContract(t testing.TB, raw []byte) error {
	t.Helper()
	doc, err := docContract()
	if err != nil {
		t.Fatalf("load contract: %v", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return doc.Components.Schemas["DocumentSnapshot"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// docView is a materialized snapshot, decoded for assertions.
type docView struct {
	Kind     string `json:"kind"`
	Epoch    string `json:"epoch"`
	Revision int64  `json:"revision"`
	Roots    []struct {
		ID    string `json:"id"`
		Label string `json:"label"`
		Docs  []struct {
			ID           string `json:"id"`
			RelativePath string `json:"relativePath"`
			Revision     *int64 `json:"revision"`
		} `json:"docs"`
	} `json:"roots"`
	ChangedID           *string         `json:"changedId"`
	LatestChange        *docLatest      `json:"latestChange"`
	DefaultDocumentID   *string         `json:"defaultDocumentId"`
	Discovery           json.RawMessage `json:"discovery"`
	RepositoryState     json.RawMessage `json:"repositoryState"`
	Repositories        json.RawMessage `json:"repositories"`
	CompareTarget       string          `json:"compareTarget"`
	GeneratedAt         int64           `json:"generatedAt"`
	UnscopedFingerprint string          `json:"unscopedFingerprint"`
}

type docLatest struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
}

// files lists the docs as "rootId: relativePath@revision", roots and docs
// in the snapshot's order, so one comparison checks membership, order and
// revisions.
func (v docView) files() []string {
	out := []string{}
	for _, r := range v.Roots {
		for _, d := range r.Docs {
			rev := "-"
			if d.Revision != nil {
				rev = strconv.FormatInt(*d.Revision, 10)
			}
			out = append(out, r.ID+": "+d.RelativePath+"@"+rev)
		}
	}
	return out
}

// materialize takes d's snapshot, checks it against the contract and
// decodes it.
func materialize(t testing.TB, d *State) docView {
	t.Helper()
	raw := d.Snapshot()
	if raw == nil {
		t.Fatal("no snapshot")
	}
	if err := checkSnapshotContract(t, raw); err != nil {
		t.Fatalf("the materialized snapshot breaks the contract: %v\n%s", err, raw)
	}
	var v docView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// docRule is one row of the rule tables: setup updates that must apply,
// then the update under test, its outcome, and a check of the state after.
type docRule struct {
	name   string
	setup  []obj
	update any // obj, or []byte for what no obj encodes to
	want   Outcome
	check  func(is *is.I, v docView)
}

// runDocRules runs rule rows. Whatever the row, an update that is not
// applied must leave the state byte for byte as it was, and every
// materialized snapshot must satisfy the contract.
func runDocRules(t *testing.T, rows []docRule) {
	t.Helper()
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			d := &State{}
			for _, s := range tt.setup {
				is.Equal(d.Apply(encode(t, s)), Applied) // a setup update applies
			}
			before := string(d.Snapshot())
			epoch, rev, ok := d.head()
			is.Equal(d.Apply(encode(t, tt.update)), tt.want) // the update's outcome
			if tt.want != Applied {
				is.Equal(string(d.Snapshot()), before) // a refused or ignored update changes nothing
				e2, r2, ok2 := d.head()
				is.Equal([]any{e2, r2, ok2}, []any{epoch, rev, ok}) // nor the head
			}
			if _, _, ok := d.head(); !ok {
				is.True(d.Snapshot() == nil) // no state, no snapshot
				return
			}
			v := materialize(t, d)
			if tt.check != nil {
				tt.check(is, v)
			}
		})
	}
}

// corpusSnapshot is a snapshot of n docs in one root, "dNNN/fNNNNN.md",
// listed out of order so applying it sorts them.
func corpusSnapshot(tb testing.TB, n int) []byte {
	tb.Helper()
	ds := make([]obj, n)
	for i := range ds {
		ds[i] = docOf(rootA, fmt.Sprintf("d%03d/f%05d.md", i%500, i), 1)
	}
	return encode(tb, snapshotOf(epochA, 1, rootOf(rootA, ds...)))
}

// corpusPatches are count patches following corpusSnapshot(n), each a
// live edit re-saving k of its docs.
func corpusPatches(tb testing.TB, n, k, count int) [][]byte {
	tb.Helper()
	out := make([][]byte, count)
	for i := range out {
		rev := int64(i + 2)
		ups := make([]obj, k)
		for j := range ups {
			at := (i*k + j) % n
			ups[j] = docOf(rootA, fmt.Sprintf("d%03d/f%05d.md", at%500, at), rev)
		}
		out[i] = encode(tb, set(patchOf(epochA, rev-1, rev, ups), "changedId", ups[0]["id"]))
	}
	return out
}

// corpusState is a state holding corpusSnapshot(n).
func corpusState(tb testing.TB, n int) *State {
	tb.Helper()
	d := &State{}
	if got := d.Apply(corpusSnapshot(tb, n)); got != Applied {
		tb.Fatalf("corpus snapshot: %v", got)
	}
	return d
}

// BenchmarkDocStatePatch applies patches to a large state: the cost
// follows the patch's size, not the corpus's.
func BenchmarkDocStatePatch(b *testing.B) {
	for _, bc := range []struct{ corpus, upserts int }{{5000, 10}, {50000, 10}, {50000, 256}} {
		b.Run(fmt.Sprintf("corpus=%d/upserts=%d", bc.corpus, bc.upserts), func(b *testing.B) {
			d := corpusState(b, bc.corpus)
			patches := corpusPatches(b, bc.corpus, bc.upserts, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if got := d.Apply(patches[i]); got != Applied {
					b.Fatalf("patch %d: %v", i, got)
				}
			}
		})
	}
}

// BenchmarkDocStateSnapshot encodes a 50,000-doc state: after a patch
// (merging the patch's docs into the order), after the order was lost
// (sorting everything again), and from the cache.
func BenchmarkDocStateSnapshot(b *testing.B) {
	const n = 50000
	b.Run("after-patch", func(b *testing.B) {
		d := corpusState(b, n)
		patches := corpusPatches(b, n, 10, b.N)
		b.SetBytes(int64(len(d.Snapshot())))
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			d.Apply(patches[i])
			b.StartTimer()
			d.Snapshot()
		}
	})
	b.Run("resort", func(b *testing.B) {
		d := corpusState(b, n)
		b.SetBytes(int64(len(d.Snapshot())))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			d.encoded, d.roots[0].lost = nil, true
			b.StartTimer()
			d.Snapshot()
		}
	})
	b.Run("cached", func(b *testing.B) {
		d := corpusState(b, n)
		d.Snapshot()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			d.Snapshot()
		}
	})
}

// BenchmarkDocStateApplySnapshot replaces a state with a 50,000-doc
// snapshot, what a (re)opened upstream costs first.
func BenchmarkDocStateApplySnapshot(b *testing.B) {
	snap := corpusSnapshot(b, 50000)
	b.SetBytes(int64(len(snap)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d := &State{}
		if got := d.Apply(snap); got != Applied {
			b.Fatalf("snapshot: %v", got)
		}
	}
}
