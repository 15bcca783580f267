package docfeed

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// committedScene is a repository with one commit of a.md and b.md.
func committedScene(t *testing.T) (root string, env []string) {
	t.Helper()
	env = gitEnv(t)
	root = tempDir(t)
	git(t, env, root, "init", "-q")
	writeFiles(t, root, map[string]string{"a.md": "one\ntwo\n", "b.md": "bee\n"})
	git(t, env, root, "add", ".")
	git(t, env, root, "commit", "-q", "-m", "first", "-m", "The body.")
	return root, env
}

func TestRepositoryFreshness(t *testing.T) {
	t.Parallel()
	root, env := committedScene(t)
	f, _ := startFeed(t, root, fastOptions(t, env))
	c := subscribe(t, f, "compareTarget=last-commit")
	c.ready()
	c.until("repository ready", func(frame) bool { return c.repoState.Status == repoReady })
	gen := c.repoState.Generation

	t.Run("first refresh", func(t *testing.T) {
		is := is.New(t)
		is.True(gen >= 1)         // a successful refresh counts
		is.Equal(len(c.repos), 1) // the repository holding the root
		r := c.repos[0]
		is.Equal(r.Status, repositoryAvailable)                                                  // a repository
		is.Equal(r.ID, root)                                                                     // its top level
		is.Equal(r.Label, filepath.Base(root))                                                   // named after it
		is.Equal(r.WatchedRootIDs, []string{root})                                               // watching the root
		is.Equal(*r.Metadata.Branch, "main")                                                     // branch
		is.Equal(*r.Metadata.HeadSha, strings.TrimSpace(git(t, env, root, "rev-parse", "HEAD"))) // head
		is.Equal(len(r.CommitLog), 1)                                                            // one commit
		e := r.CommitLog[0]
		is.Equal(e.Subject, "first")                                                   // subject
		is.Equal(e.Message, "The body.")                                               // body
		is.Equal(*e.Author, "Test Author")                                             // author
		is.Equal(e.Sha, *r.Metadata.HeadShort)                                         // short id
		is.True(regexp.MustCompile(`^\d+ seconds? ago$`).MatchString(*e.RelativeTime)) // just now, in Git's words
		age := time.Since(time.UnixMilli(e.CommittedAtMs))
		is.True(age >= 0 && age < time.Minute) // committedAtMs from %ct
		is.Equal(len(r.ChangedFiles), 0)       // clean
	})
	t.Run("a commit is seen", func(t *testing.T) {
		is := is.New(t)
		writeFiles(t, root, map[string]string{"c.md": "see\n"})
		git(t, env, root, "add", "c.md")
		git(t, env, root, "commit", "-q", "-m", "second")
		sawStale := false
		c.until("the new commit", func(fr frame) bool {
			if fr.RepositoryState != nil && fr.RepositoryState.Status == repoStale {
				sawStale = true
			}
			return len(c.repos) == 1 && len(c.repos[0].CommitLog) == 2 && c.repoState.Status == repoReady
		})
		is.True(sawStale)                                   // stale while refreshing
		is.True(c.repoState.Generation > gen)               // a new generation
		is.Equal(c.repos[0].CommitLog[0].Subject, "second") // newest first
	})
	t.Run("working tree changes", func(t *testing.T) {
		is := is.New(t)
		writeFiles(t, root, map[string]string{"a.md": "one\n2\nthree\n", "new.txt": "n\n"})
		is.NoErr(os.Remove(filepath.Join(root, "b.md"))) // delete a tracked file
		c.until("changed files", func(frame) bool {
			return len(c.repos) == 1 && len(c.repos[0].ChangedFiles) == 3 && c.repoState.Status == repoReady
		})
		byPath := map[string]changedFile{}
		for _, cf := range c.repos[0].ChangedFiles {
			byPath[cf.Path] = cf
		}
		is.Equal(byPath["a.md"].Status, "modified")     // modified
		is.Equal(*byPath["a.md"].Additions, 2)          // two lines added
		is.Equal(*byPath["a.md"].Deletions, 1)          // one removed
		is.Equal(byPath["b.md"].Status, "deleted")      // deleted
		is.Equal(byPath["new.txt"].Status, "untracked") // untracked
		is.True(byPath["new.txt"].Additions == nil)     // not counted
	})
	t.Run("a broken repository is an error", func(t *testing.T) {
		is := is.New(t)
		head := filepath.Join(root, ".git", "HEAD")
		good, err := os.ReadFile(head)
		is.NoErr(err)                                            // read HEAD
		is.NoErr(os.WriteFile(head, []byte("garbage\n"), 0o644)) // break it
		c.until("the error", func(frame) bool { return c.repoState.Status == repoError })
		is.True(c.repoState.Message != "") // said why, in general words
		g := c.repoState.Generation
		is.NoErr(os.WriteFile(head, good, 0o644)) // repair it
		c.until("recovery", func(frame) bool { return c.repoState.Status == repoReady })
		is.Equal(c.repoState.Generation, g+1) // the failure kept the generation
	})
}

func TestCompareTargets(t *testing.T) {
	t.Parallel()
	root, env := committedScene(t)
	git(t, env, root, "switch", "-q", "-c", "feature")
	writeFiles(t, root, map[string]string{"a.md": "one\ntwo\nthree\n"})
	git(t, env, root, "commit", "-q", "-am", "on the branch")
	writeFiles(t, root, map[string]string{"wip.md": "w\n"})
	f, _ := startFeed(t, root, fastOptions(t, env))

	t.Run("base", func(t *testing.T) {
		is := is.New(t)
		c := subscribe(t, f, "compareTarget=base")
		c.until("repository", func(frame) bool { return c.repoState.Status == repoReady && len(c.repos) == 1 })
		r := c.repos[0]
		is.Equal(r.Base.Mode, "merge-base")                                                    // against the default branch
		is.Equal(*r.Base.Ref, "main")                                                          // found main
		is.Equal(*r.Base.MergeBase, strings.TrimSpace(git(t, env, root, "rev-parse", "main"))) // the fork point
		is.True(!r.Base.TargetsCollapsed)                                                      // a branch of its own
		var paths []string
		for _, cf := range r.ChangedFiles {
			paths = append(paths, cf.Path+":"+cf.Status)
		}
		is.Equal(paths, []string{"a.md:modified", "wip.md:untracked"}) // the branch's commit and the work in progress
	})
	t.Run("last-commit", func(t *testing.T) {
		is := is.New(t)
		c := subscribe(t, f, "compareTarget=last-commit")
		c.until("repository", func(frame) bool { return c.repoState.Status == repoReady && len(c.repos) == 1 })
		r := c.repos[0]
		is.Equal(r.Base.Mode, "head") // against HEAD
		var paths []string
		for _, cf := range r.ChangedFiles {
			paths = append(paths, cf.Path)
		}
		is.Equal(paths, []string{"wip.md"}) // only what is not committed
	})
}

func TestEmptyRepository(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	env := gitEnv(t)
	root := tempDir(t)
	git(t, env, root, "init", "-q")
	writeFiles(t, root, map[string]string{"a.md": "a\n"})
	f, _ := startFeed(t, root, fastOptions(t, env))
	c := subscribe(t, f, "")
	c.until("repository", func(frame) bool { return c.repoState.Status == repoReady && len(c.repos) == 1 })
	r := c.repos[0]
	is.True(r.Metadata.HeadSha == nil) // no commit yet
	is.Equal(len(r.CommitLog), 0)      // an empty log
	is.True(r.Base.TargetsCollapsed)   // nothing to compare against
	is.Equal(len(r.ChangedFiles), 1)   // the untracked file
}

func TestRootInsideRepository(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	env := gitEnv(t)
	top := tempDir(t)
	git(t, env, top, "init", "-q")
	writeFiles(t, top, map[string]string{
		".gitignore": "*.tmp\n", "docs/a.md": "a\n", "docs/skip.tmp": "t\n", "other/b.md": "b\n",
	})
	git(t, env, top, "add", ".")
	git(t, env, top, "commit", "-q", "-m", "first")
	root := filepath.Join(top, "docs")
	// Variables that would send git elsewhere must not reach it.
	opts := fastOptions(t, append(env, "GIT_DIR=/nonexistent", "GIT_WORK_TREE=/nonexistent", "GIT_INDEX_FILE=/nonexistent"))
	f, _ := startFeed(t, root, opts)
	c := subscribe(t, f, "")
	c.ready()
	is.Equal(c.relPaths(), []string{"a.md"}) // only the root's files, with the repository's ignore rules
	c.until("repository", func(frame) bool { return c.repoState.Status == repoReady && len(c.repos) == 1 })
	is.Equal(c.repos[0].ID, top)                        // the repository holding the root
	is.Equal(c.repos[0].WatchedRootIDs, []string{root}) // watched through the root
	is.Equal(len(c.repos[0].CommitLog), 1)              // its history
}
