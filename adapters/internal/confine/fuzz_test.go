package confine

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzNoPathLeadsOut gives the boundary any path an agent could name, in
// a workspace holding every kind of link out (tree), through both
// resolvers: a read never returns the outside file's content, and a write
// never adds, removes or changes anything outside.
func FuzzNoPathLeadsOut(f *testing.F) {
	ws, outside := tree(f)
	for _, seed := range []string{
		"a.txt", "docs/todo.md", "out/secret", "out2/deeper/x", "secretlink", "docs2/guide.md",
		"abs/guide.md", "up/outside/secret", "../outside/secret", "hard", "loop1/x", "docs/../../outside/secret",
		"docs2/../out/secret", "./././a.txt", "documentation/../../outside/x",
	} {
		f.Add(seed)
	}
	roots := map[string]*Root{}
	for name, res := range resolversUnderTest(f) {
		roots[name] = rootWith(ws, res)
	}
	secret, err := os.ReadFile(filepath.Join(outside, "secret"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		if len(rel) > 512 {
			return
		}
		for name, r := range roots {
			if b, err := r.ReadFile(rel, 1<<20); err == nil && bytes.Contains(b, secret) {
				t.Fatalf("%s: reading %q returned the outside file", name, rel)
			}
			_ = r.WriteFile(rel, []byte("written by the fuzzer"))
			ents, err := os.ReadDir(outside)
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, []string{"secret"}) {
				t.Fatalf("%s: writing %q changed the outside folder: %v", name, rel, names)
			}
			if b, err := os.ReadFile(filepath.Join(outside, "secret")); err != nil || !bytes.Equal(b, secret) {
				t.Fatalf("%s: writing %q changed the outside file", name, rel)
			}
		}
	})
}
