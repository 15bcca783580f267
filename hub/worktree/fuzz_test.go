package worktree_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

// FuzzCheckBranch: whatever the name, an accepted branch is one git would
// accept too as far as these rules go, within 64 code points, and gives
// folders of the safe alphabet, never empty, never leading with "-",
// never "." or "..", and two different folders.
func FuzzCheckBranch(f *testing.F) {
	for _, s := range []string{"main", "feature/x", "a..b", "-x", "über", "日本/x", "a.lock", "@", "x\u200by"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, branch string) {
		err := worktree.CheckBranch(branch)
		if err != nil {
			if err.Code != hub.WTInvalidInput {
				t.Fatalf("refused %q with %s", branch, err.Code)
			}
			return
		}
		if utf8.RuneCountInString(branch) > worktree.MaxBranch || strings.Contains(branch, "..") || strings.ContainsAny(branch, " \t\n:~^?*[\\") {
			t.Fatalf("accepted %q", branch)
		}
		d := worktree.Destinations("/src/app", branch)
		for _, p := range d {
			name := strings.TrimPrefix(p, "/src/app.worktrees/")
			if name == "" || name == "." || name == ".." || strings.HasPrefix(name, "-") || len(name) > 109 ||
				strings.ContainsFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') }) {
				t.Fatalf("%q gives the folder %q", branch, name)
			}
		}
		if d[0] == d[1] {
			t.Fatalf("%q's two destinations are one", branch)
		}
	})
}

// FuzzFingerprint: a fingerprint ignores the order of entries and changes
// with any entry added, dropped or changed.
func FuzzFingerprint(f *testing.F) {
	f.Add("??", "a.txt", " M", "b.go", "!!", "out/")
	f.Add("??", "a", "??", "b", "??", "c")
	f.Fuzz(func(t *testing.T, c1, p1, c2, p2, c3, p3 string) {
		es := []hub.StatusEntry{{Code: c1, Path: p1}, {Code: c2, Path: p2}, {Code: c3, Path: p3}}
		if es[0] == es[1] || es[1] == es[2] || es[0] == es[2] {
			return
		}
		// A NUL inside a field could make two entry lists one stream; git
		// never lists one (it is its separator).
		for _, e := range es {
			if strings.ContainsRune(e.Code+e.Path, 0) {
				return
			}
		}
		a := worktree.Summarize(someCheckout, es)
		b := worktree.Summarize(someCheckout, []hub.StatusEntry{es[2], es[0], es[1]})
		if a.Fingerprint != b.Fingerprint {
			t.Fatal("the order of entries changed the fingerprint")
		}
		if !worktree.ValidFingerprint(a.Fingerprint) {
			t.Fatalf("malformed fingerprint %q", a.Fingerprint)
		}
		if worktree.Summarize(someCheckout, es[:2]).Fingerprint == a.Fingerprint {
			t.Fatal("dropping an entry kept the fingerprint")
		}
		changed := []hub.StatusEntry{es[0], es[1], {Code: es[2].Code + "x", Path: es[2].Path}}
		if worktree.Summarize(someCheckout, changed).Fingerprint == a.Fingerprint {
			t.Fatal("changing an entry's code kept the fingerprint")
		}
	})
}
