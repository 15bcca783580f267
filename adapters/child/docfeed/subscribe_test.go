package docfeed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/matryer/is"
)

func fileKey(id string) string {
	return "scope=file&documentId=" + url.QueryEscape(id)
}

func TestFileScope(t *testing.T) {
	t.Parallel()
	root, f, folder := liveScene(t, map[string]string{"a.md": "a\n", "b.md": "b\n", "pic.bin": "\x00\x01"})
	a, b := filepath.Join(root, "a.md"), filepath.Join(root, "b.md")
	pinned := subscribe(t, f, fileKey(a))

	t.Run("snapshot of the pinned document", func(t *testing.T) {
		is := is.New(t)
		snap := pinned.read()
		is.Equal(snap.Scope, scopeJSON{Kind: ScopeFile, DocumentID: a}) // pinned scope
		is.Equal(len(snap.Roots[0].Docs), 1)                            // only the pinned document
		is.Equal(snap.Roots[0].Docs[0].ID, a)                           // which is a.md
		id, _ := snap.defaultID()
		is.Equal(id, a)                                                     // the pin is the default
		is.Equal(snap.Discovery.Discovered, 3)                              // discovery counts the whole folder
		is.Equal(snap.UnscopedFingerprint, folder.last.UnscopedFingerprint) // same corpus
	})
	t.Run("another document's edit advances the revision only", func(t *testing.T) {
		is := is.New(t)
		prior := pinned.last.UnscopedFingerprint
		writeFiles(t, root, map[string]string{"b.md": "bee\n"})
		fr := pinned.until("the corpus change", func(fr frame) bool { return fr.UnscopedFingerprint != prior })
		is.Equal(fr.Kind, "patch")   // a patch
		is.Equal(len(fr.Upserts), 0) // nothing of b.md
		is.True(fr.ChangedID == nil) // b.md is not the pin
		_, present := fr.defaultID()
		is.True(!present) // default unchanged
		folderFrame := folder.until("b.md", func(fr frame) bool { _, ok := hasUpsert(fr, b); return ok })
		is.Equal(fr.UnscopedFingerprint, folderFrame.UnscopedFingerprint) // the corpus change shows
	})
	t.Run("the pinned document's edit", func(t *testing.T) {
		is := is.New(t)
		writeFiles(t, root, map[string]string{"a.md": "ay\n"})
		fr := pinned.until("a.md", func(fr frame) bool { _, ok := hasUpsert(fr, a); return ok })
		is.True(fr.ChangedID != nil && *fr.ChangedID == a) // its own edit
		is.Equal(len(fr.Upserts), 1)                       // only the pin
	})
	t.Run("the pinned document's removal", func(t *testing.T) {
		is := is.New(t)
		writeFiles(t, root, map[string]string{"gone.md": ""})
		is.NoErr(removeFile(root, "a.md")) // remove the pin
		fr := pinned.until("the removal", func(fr frame) bool { return hasRemoval(fr, a) })
		id, present := fr.defaultID()
		is.True(present && id == "") // no default any more
		is.Equal(len(fr.Upserts), 0) // gone.md is not for this scope
	})
	t.Run("a pin to a missing or binary document falls back to folder", func(t *testing.T) {
		for _, rel := range []string{"missing.md", "pic.bin"} {
			is := is.New(t)
			c := subscribe(t, f, fileKey(filepath.Join(root, rel)))
			snap := c.read()
			is.Equal(snap.Scope, scopeJSON{Kind: ScopeFolder}) // folder scope
			is.True(len(snap.Roots[0].Docs) > 1)               // the whole folder
		}
	})
	t.Run("last-commit target", func(t *testing.T) {
		is := is.New(t)
		c := subscribe(t, f, "compareTarget=last-commit")
		snap := c.read()
		is.Equal(snap.CompareTarget, CompareLastCommit) // echoed
	})
	t.Run("invalid keys", func(t *testing.T) {
		is := is.New(t)
		_, err := f.Subscribe(context.Background(), "scope=file")
		is.True(errors.Is(err, ErrInvalidKey)) // file scope without a document
		_, err = f.Subscribe(context.Background(), "colour=blue")
		is.True(errors.Is(err, ErrInvalidKey)) // unknown parameter
	})
}

func TestPinDuringIndexingSettlesWhenReady(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	env := gitEnv(t)
	root := tempDir(t)
	writeFiles(t, root, map[string]string{"a.md": "a\n"})
	f := New(root, fastOptions(t, env))
	missing := subscribe(t, f, fileKey(filepath.Join(root, "nope.md")))
	present := subscribe(t, f, fileKey(filepath.Join(root, "a.md")))
	snap := missing.read()
	is.Equal(snap.Scope.Kind, ScopeFile) // kept while indexing: missing is no evidence yet
	present.read()
	startFeedFrom(t, f)
	fr := missing.until("the fallback snapshot", func(fr frame) bool { return fr.Kind == "snapshot" })
	is.Equal(fr.Scope, scopeJSON{Kind: ScopeFolder}) // folder once ready
	fr = present.until("ready", func(frame) bool { return present.discovery.Status == discoveryReady })
	is.Equal(fr.Kind, "patch")                               // a usable pin stays a patch stream
	is.Equal(present.defaultID, filepath.Join(root, "a.md")) // the pin becomes the default
}

func TestSlowSubscriberGetsSnapshot(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	env := gitEnv(t)
	root := tempDir(t)
	writeFiles(t, root, map[string]string{"a.md": "a\n"})
	opts := fastOptions(t, env)
	opts.QueueFrames = 3
	f, _ := startFeed(t, root, opts)
	fast := subscribe(t, f, "")
	fast.ready()
	slow := subscribe(t, f, "")
	slow.read() // the first snapshot, then it stops reading

	var head int64
	for i := range 8 {
		rel := fmt.Sprintf("f%d.md", i)
		writeFiles(t, root, map[string]string{rel: "x\n"})
		head = fast.until(rel, func(frame) bool { _, ok := fast.docs[filepath.Join(root, rel)]; return ok }).Revision
	}
	fr := slow.read()
	is.Equal(fr.Kind, "snapshot") // a snapshot instead of the missed patches
	is.True(fr.Revision >= head)  // at least as new as the last file's patch
	is.Equal(len(slow.docs), 9)   // complete
	writeFiles(t, root, map[string]string{"after.md": "x\n"})
	slow.until("a patch after the snapshot", func(fr frame) bool { return fr.Kind == "patch" && len(fr.Upserts) > 0 })
	is.Equal(len(slow.docs), 10) // patches chain on again (the client checks every link)
}

func TestRunStopsEverything(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	is := is.New(t)
	env := gitEnv(t)
	root := repoScene(t, env)
	before := runtime.NumGoroutine()

	f, stop := startFeed(t, root, fastOptions(t, env))
	c := subscribe(t, f, "")
	c.ready()
	c.until("repositories", func(frame) bool { return c.repoState.Status == repoReady })
	sub, err := f.Subscribe(context.Background(), "")
	is.NoErr(err) // a second subscriber, blocked in Next when the feed stops
	nextErr := make(chan error, 1)
	go func() {
		for {
			if _, err := sub.Next(context.Background()); err != nil {
				nextErr <- err
				return
			}
		}
	}()
	writeFiles(t, root, map[string]string{"busy.md": "x\n"})

	is.NoErr(stop()) // Run returns nil on a clean stop
	select {
	case err := <-nextErr:
		is.True(errors.Is(err, ErrClosed)) // subscribers end
	case <-time.After(waitLimit):
		t.Fatal("Next did not return after Run")
	}
	_, err = f.Subscribe(context.Background(), "")
	is.True(errors.Is(err, ErrClosed)) // nothing to subscribe to any more

	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(waitLimit)
	for runtime.NumGoroutine() > before {
		select {
		case <-tick.C:
		case <-deadline:
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
	}
}

func TestRunRefusesBadRoots(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	writeFiles(t, dir, map[string]string{"file": "x"})
	for _, tc := range []struct{ name, root string }{
		{"relative", "some/where"},
		{"missing", filepath.Join(dir, "missing")},
		{"a file", filepath.Join(dir, "file")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			f := New(tc.root, Options{})
			is.True(f.Run(context.Background()) != nil) // refused
			_, err := f.Subscribe(context.Background(), "")
			is.True(errors.Is(err, ErrClosed)) // and closed
		})
	}
}

func removeFile(root, rel string) error {
	return os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
}
