package docstate

import (
	"encoding/json"
	"testing"
)

// The document updates the Hub materializes come from a workspace child,
// which runs with the user's files and may be compromised or buggy: no
// sequence of updates may panic the reducer, an update it refuses leaves
// the state exactly as it was, and the snapshot it serves is JSON.
func FuzzDocStateApply(f *testing.F) {
	f.Add(encode(f, base()), encode(f, patchOf(epochA, 10, 11, docs(docOf(rootA, "b.md", 11)), removal(rootA, rootA+"/a.md"))))
	f.Add(encode(f, base()), encode(f, snapshotOf("other", 1)))
	f.Add(encode(f, patchOf(epochA, 10, 11, nil)), []byte(`{"kind":"patch"}`))
	f.Add([]byte(`{"kind":"snapshot","epoch":"e","revision":9007199254740993}`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var d State
		d.Apply(first)
		before := d.Snapshot()
		if d.Apply(second) != Applied {
			if after := d.Snapshot(); string(after) != string(before) {
				t.Fatalf("a refused or ignored update changed the state:\n%s\n%s", before, after)
			}
		}
		if snap := d.Snapshot(); snap != nil && !json.Valid(snap) {
			t.Fatalf("the materialized snapshot is not JSON: %s", snap)
		}
	})
}
