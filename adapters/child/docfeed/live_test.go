package docfeed

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"
)

// liveScene starts a feed on a small repository and returns a ready
// folder-scope client.
func liveScene(t *testing.T, files map[string]string) (root string, f *Feed, c *client) {
	t.Helper()
	env := gitEnv(t)
	root = tempDir(t)
	git(t, env, root, "init", "-q")
	writeFiles(t, root, files)
	f, _ = startFeed(t, root, fastOptions(t, env))
	c = subscribe(t, f, "")
	c.ready()
	// Settle the repository too, so the next frame is the test's own.
	c.until("repository ready", func(frame) bool { return c.repoState.Status == repoReady })
	return root, f, c
}

func TestSaveMakesPatch(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	root, f, c := liveScene(t, map[string]string{"a.md": "one\n", "b.md": "bee\n"})
	id := filepath.Join(root, "a.md")
	before := c.docs[id]
	prior := c.revision

	writeFiles(t, root, map[string]string{"a.md": "two\n"})
	fr := c.until("the save's patch", func(fr frame) bool { _, ok := hasUpsert(fr, id); return ok })
	is.Equal(fr.Kind, "patch")           // a save is a patch
	is.Equal(fr.PreviousRevision, prior) // applies on the prior revision
	d, ok := hasUpsert(fr, id)
	is.True(ok)                                         // the saved file
	is.True(d.Revision > before.Revision)               // the file's new revision
	is.True(d.Revision <= fr.Revision)                  // never above the patch's
	is.True(fr.ChangedID != nil && *fr.ChangedID == id) // a live edit
	is.Equal(len(fr.Upserts), 1)                        // only the saved file
	is.Equal(len(fr.Removals), 0)                       // nothing removed

	t.Run("same stat saves again", func(t *testing.T) {
		is := is.New(t)
		// Same size, same mtime: only the write event tells the saves apart.
		st, err := os.Stat(filepath.Join(root, "a.md"))
		is.NoErr(err) // stat
		writeFiles(t, root, map[string]string{"a.md": "six\n"})
		is.NoErr(os.Chtimes(filepath.Join(root, "a.md"), st.ModTime(), st.ModTime())) // keep mtime
		prev := c.docs[id].Revision
		fr := c.until("the second save", func(fr frame) bool {
			d, ok := hasUpsert(fr, id)
			return ok && d.Revision > prev
		})
		is.Equal(fr.Kind, "patch") // a second patch
	})

	t.Run("snapshot remembers the edit", func(t *testing.T) {
		is := is.New(t)
		late := subscribe(t, f, "")
		snap := late.read()
		is.True(snap.LatestChange != nil)  // latestChange kept
		is.Equal(snap.LatestChange.ID, id) // the edited document
		is.True(snap.ChangedID == nil)     // but no live edit in a snapshot
	})
}

func TestCreateDeleteRename(t *testing.T) {
	t.Parallel()
	root, _, c := liveScene(t, map[string]string{"a.md": "a\n", "dir/b.md": "b\n"})
	id := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	t.Run("create", func(t *testing.T) {
		is := is.New(t)
		writeFiles(t, root, map[string]string{"c.txt": "new\n"})
		fr := c.until("creation", func(fr frame) bool { _, ok := hasUpsert(fr, id("c.txt")); return ok })
		d, _ := hasUpsert(fr, id("c.txt"))
		is.Equal(d.Kind, KindText)                                   // classified
		is.True(fr.ChangedID != nil && *fr.ChangedID == id("c.txt")) // an add after the scan is a live edit
		is.Equal(c.discovery.Discovered, 3)                          // counted
	})
	t.Run("delete", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(os.Remove(id("a.md"))) // delete
		fr := c.until("removal", func(fr frame) bool { return hasRemoval(fr, id("a.md")) })
		is.Equal(fr.Removals[0].RootID, root) // root-qualified
		is.True(fr.ChangedID == nil)          // a removal is no edit
		_, still := c.docs[id("a.md")]
		is.True(!still) // gone from the model
	})
	t.Run("rename", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(os.Rename(id("dir/b.md"), id("dir/renamed.md"))) // rename
		c.until("rename", func(frame) bool {
			_, oldThere := c.docs[id("dir/b.md")]
			_, newThere := c.docs[id("dir/renamed.md")]
			return !oldThere && newThere
		})
		is.Equal(c.relPaths(), []string{"c.txt", "dir/renamed.md"}) // the model follows
	})
	t.Run("directory rename", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(os.Rename(id("dir"), id("moved"))) // move the directory
		c.until("directory move", func(frame) bool {
			_, there := c.docs[id("moved/renamed.md")]
			return there && len(c.docs) == 2
		})
		writeFiles(t, root, map[string]string{"moved/after.md": "x\n"})
		c.until("a file in the moved directory", func(frame) bool { _, ok := c.docs[id("moved/after.md")]; return ok })
		is.Equal(c.relPaths(), []string{"c.txt", "moved/after.md", "moved/renamed.md"}) // watched under its new name
	})
	t.Run("directory removal", func(t *testing.T) {
		is := is.New(t)
		is.NoErr(os.RemoveAll(id("moved"))) // remove the tree
		c.until("tree removal", func(frame) bool { return len(c.docs) == 1 })
		is.Equal(c.relPaths(), []string{"c.txt"}) // everything below removed
	})
}

func TestBurstIsBatched(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	root, _, c := liveScene(t, map[string]string{"a.md": "a\n"})
	files := map[string]string{}
	for i := range 600 {
		files[fmt.Sprintf("burst/f%03d.md", i)] = "x\n"
	}
	writeFiles(t, root, files)
	patches := 0
	c.until("all 600 files", func(fr frame) bool {
		if n := len(fr.Upserts) + len(fr.Removals); n > 0 {
			patches++
			is.True(n <= DefaultBatchLimit) // at most 256 per batch
		}
		return len(c.docs) == 601
	})
	is.True(patches >= 3) // 600 files need at least three batches
}

func TestNewDirectoryIsWatched(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	root, _, c := liveScene(t, map[string]string{"a.md": "a\n"})
	id := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	// Created deep at once: the inner directories exist before any watch,
	// so their files must come from listing them.
	writeFiles(t, root, map[string]string{"x/y/z/deep.md": "deep\n"})
	c.until("the deep file", func(frame) bool { _, ok := c.docs[id("x/y/z/deep.md")]; return ok })
	// Now watched: a later file appears through its event.
	writeFiles(t, root, map[string]string{"x/y/z/later.md": "later\n", "x/y/sibling.txt": "s\n"})
	c.until("later files", func(frame) bool {
		_, a := c.docs[id("x/y/z/later.md")]
		_, b := c.docs[id("x/y/sibling.txt")]
		return a && b
	})
	is.Equal(len(c.docs), 4) // every file
}

func TestIgnoreRules(t *testing.T) {
	t.Parallel()
	root, _, c := liveScene(t, map[string]string{".gitignore": "*.tmp\nout/\n", "a.md": "a\n"})
	id := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }

	t.Run("new ignored files stay out", func(t *testing.T) {
		is := is.New(t)
		writeFiles(t, root, map[string]string{"x.tmp": "t\n", "out/gen.md": "g\n", "marker.md": "m\n"})
		c.until("the marker", func(frame) bool { _, ok := c.docs[id("marker.md")]; return ok })
		is.Equal(c.relPaths(), []string{".gitignore", "a.md", "marker.md"}) // ignored ones left out
	})
	t.Run(".gitignore change re-indexes", func(t *testing.T) {
		is := is.New(t)
		prior := c.revision
		writeFiles(t, root, map[string]string{".gitignore": "a.md\nmarker.md\n"})
		sawRecovering := false
		fr := c.until("a fresh snapshot", func(fr frame) bool {
			if fr.Discovery != nil && fr.Discovery.Status == discoveryRecovering {
				sawRecovering = true
			}
			return fr.Kind == "snapshot"
		})
		is.True(sawRecovering)                                                // recovering meanwhile
		is.True(fr.Revision > prior)                                          // a new revision
		is.Equal(fr.Discovery.Status, discoveryReady)                         // ready again
		is.Equal(c.relPaths(), []string{".gitignore", "out/gen.md", "x.tmp"}) // the new rules apply
	})
}

func TestNonGitFolder(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	root := tempDir(t)
	writeFiles(t, root, map[string]string{
		".gitignore": "*.md\n", "a.md": "a\n", "sub/b.txt": "b\n", ".git/config": "not a repository\n",
	})
	f, _ := startFeed(t, root, fastOptions(t, gitEnv(t)))
	c := subscribe(t, f, "")
	c.ready()
	is.Equal(c.relPaths(), []string{".gitignore", "a.md", "sub/b.txt"}) // everything but .git; no ignore rules outside a repository
	c.until("repositories", func(frame) bool { return len(c.repos) == 1 })
	is.Equal(c.repos[0].Status, repositoryNonGit) // not a repository
	is.Equal(c.repos[0].RootPath, root)           // described by its folder
	writeFiles(t, root, map[string]string{"sub/new.md": "n\n"})
	c.until("a new file", func(frame) bool { _, ok := c.docs[filepath.Join(root, "sub/new.md")]; return ok })
}

func TestSymlinksAreNotFollowed(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	outside := tempDir(t)
	writeFiles(t, outside, map[string]string{"secret.md": "outside\n"})
	root, _, c := liveScene(t, map[string]string{"a.md": "a\n"})
	is.NoErr(os.Symlink(outside, filepath.Join(root, "linkdir")))                          // a link to a directory
	is.NoErr(os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "l.md"))) // a link to a file
	writeFiles(t, root, map[string]string{"marker.md": "m\n"})
	c.until("the marker", func(frame) bool { _, ok := c.docs[filepath.Join(root, "marker.md")]; return ok })
	is.Equal(c.relPaths(), []string{"a.md", "marker.md"}) // links neither listed nor followed
}
