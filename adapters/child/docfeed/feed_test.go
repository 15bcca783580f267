package docfeed

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/matryer/is"
)

// repoScene makes a committed repository with every kind of file, ignored
// ones, a symbolic link and a nested repository; it returns the root.
func repoScene(t *testing.T, env []string) string {
	t.Helper()
	root := tempDir(t)
	git(t, env, root, "init", "-q")
	writeFiles(t, root, map[string]string{
		".gitignore":           "*.log\nbuild/\n",
		"README.md":            "# Hello\n",
		"guide.adoc":           "= Guide\n",
		"notes.txt":            "plain words, ünïcödé\n",
		"image.bin":            "PNG\x00\x01\x02",
		"docs/deep/a.markdown": "deep\n",
		"ignored.log":          "noise\n",
		"keep.log":             "tracked although ignored\n",
		"build/out.md":         "generated\n",
		"nested/.keep":         "",
	})
	git(t, env, root, "add", ".gitignore", "README.md", "guide.adoc", "notes.txt", "image.bin", "docs")
	git(t, env, root, "add", "-f", "keep.log")
	git(t, env, root, "commit", "-q", "-m", "first")
	git(t, env, filepath.Join(root, "nested"), "init", "-q")
	writeFiles(t, root, map[string]string{"new.md": "untracked\n", "nested/inner.md": "another repository\n"})
	if err := os.Symlink("README.md", filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	// The binary file is the newest, README.md the newest document.
	base := time.Now().Add(-time.Hour)
	for i, rel := range []string{".gitignore", "guide.adoc", "notes.txt", "docs/deep/a.markdown", "keep.log", "new.md", "README.md", "image.bin"} {
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(rel)), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	env := gitEnv(t)
	root := repoScene(t, env)
	f, _ := startFeed(t, root, fastOptions(t, env))
	first := subscribe(t, f, "")
	first.ready()

	c := subscribe(t, f, "")
	snap := c.read()
	is.Equal(snap.Kind, "snapshot")                                      // first frame is a snapshot
	_, err := uuid.Parse(snap.Epoch)                                     // epoch
	is.NoErr(err)                                                        // epoch is a UUID
	is.Equal(snap.Discovery.Status, discoveryReady)                      // inventory complete
	is.Equal(snap.Discovery.Discovered, 8)                               // every listed document
	is.Equal(len(snap.Roots), 1)                                         // one root
	is.Equal(snap.Roots[0].ID, root)                                     // root id is the folder
	is.Equal(snap.Roots[0].Path, root)                                   // root path is the folder
	is.Equal(snap.Roots[0].Label, filepath.Base(root))                   // root label is its name
	is.Equal(snap.Roots[0].HiddenCount, 0)                               // nothing hidden
	is.Equal(snap.WorkspaceAPIRevision, 24)                              // workspace revision
	is.True(snap.InitialFollow)                                          // follow by default
	is.Equal(snap.Scope, scopeJSON{Kind: ScopeFolder})                   // default scope
	is.Equal(snap.CompareTarget, CompareBase)                            // default target
	is.True(snap.Build != nil && snap.Build.Identifier != "")            // build summary
	is.True(snap.ChangedID == nil)                                       // a snapshot is no live edit
	is.True(bytes.Contains(snap.raw, []byte(`"changedId":null`)))        // changedId present as null
	is.True(strings.HasPrefix(snap.UnscopedFingerprint, snap.Epoch+":")) // fingerprint of the epoch

	var rels []string
	kinds := map[string]Kind{}
	for _, d := range snap.Roots[0].Docs {
		rels = append(rels, d.RelativePath)
		kinds[d.RelativePath] = d.Kind
		is.Equal(d.ID, filepath.Join(root, filepath.FromSlash(d.RelativePath))) // id is the absolute path
		is.Equal(d.RootID, root)                                                // in the root
		is.Equal(d.Name, filepath.Base(d.ID))                                   // name is the base name
		is.True(d.Revision > 0 && d.Revision <= snap.Revision)                  // revision within the snapshot's
	}
	wantRels := []string{".gitignore", "README.md", "docs/deep/a.markdown", "guide.adoc",
		"image.bin", "keep.log", "new.md", "notes.txt"}
	wantKinds := map[string]Kind{
		".gitignore": KindText, "README.md": KindMarkdown, "docs/deep/a.markdown": KindMarkdown,
		"guide.adoc": KindAsciiDoc, "image.bin": KindBinary, "keep.log": KindText,
		"new.md": KindMarkdown, "notes.txt": KindText,
	}
	is.Equal(rels, wantRels)   // sorted; ignored files, links and nested repositories left out
	is.Equal(kinds, wantKinds) // kinds
	id, present := snap.defaultID()
	is.True(present)                               // defaultDocumentId always in a snapshot
	is.Equal(id, filepath.Join(root, "README.md")) // newest non-binary document

	t.Run("contract is strict", func(t *testing.T) {
		is := is.New(t)
		extra := bytes.Replace(snap.raw, []byte(`{"kind":"snapshot"`), []byte(`{"bogus":1,"kind":"snapshot"`), 1)
		is.True(checkContract(t, "DocumentSnapshot", extra) != nil) // an unknown field fails validation
		missing := bytes.Replace(snap.raw, []byte(`"changedId":null,`), nil, 1)
		is.True(checkContract(t, "DocumentSnapshot", missing) != nil) // a missing required field fails validation
	})
}

func TestIndexingThenReady(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	env := gitEnv(t)
	root := tempDir(t)
	git(t, env, root, "init", "-q")
	files := map[string]string{}
	for i := range 300 {
		files[filepath.Join("d", string(rune('a'+i%26)), strings.Repeat("x", 1+i/26)+".md")] = "x\n"
	}
	writeFiles(t, root, files)
	opts := fastOptions(t, env)
	opts.BatchLimit = 100
	f := New(root, opts)
	c := subscribe(t, f, "") // before Run: the indexing state
	snap := c.read()
	is.Equal(snap.Discovery.Status, discoveryIndexing) // indexing before the inventory
	id, present := snap.defaultID()
	is.True(present && id == "") // no default document while indexing

	_, _ = startFeedFrom(t, f)
	var statuses []string
	for c.discovery.Status != discoveryReady {
		fr := c.read()
		is.True(len(fr.Upserts) <= 100) // batches bounded
		if fr.Discovery != nil {
			statuses = append(statuses, fr.Discovery.Status)
		}
		if c.discovery.Status == discoveryIndexing {
			id, _ := fr.defaultID()
			is.Equal(id, "") // no default while indexing
		}
	}
	is.Equal(len(c.docs), 300)                          // whole inventory
	is.Equal(statuses[len(statuses)-1], discoveryReady) // ends ready
	is.Equal(statuses[0], discoveryIndexing)            // counts while indexing
	is.True(c.defaultID != "")                          // a default once ready
	is.True(slices.Contains(c.relPaths(), "d/a/x.md"))  // listed
}
