package gitexec_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/gitexec"
)

// The worktree family's bounds: an inventory of 50 worktrees within 2×
// of `git worktree list --porcelain`, a preflight of 100,000 files
// within 2× of `git status --porcelain --ignored`. Each benchmark
// alternates the plain git command and the runner's call in every
// iteration, so both see the same machine, and reports each one's time
// and their ratio.

// BenchmarkListWorktrees lists a repository with 50 linked trees.
func BenchmarkListWorktrees(b *testing.B) {
	env := testEnv(b)
	main := b.TempDir()
	benchGit(b, env, main, "init", "--quiet")
	benchGit(b, env, main, "commit", "--quiet", "--allow-empty", "-m", "first")
	trees := b.TempDir()
	for i := range 50 {
		benchGit(b, env, main, "worktree", "add", "--quiet", "-b", fmt.Sprint("b", i), filepath.Join(trees, fmt.Sprint(i)))
	}
	r := gitexec.New(gitexec.Options{Env: env})
	b.Cleanup(func() { r.Close() })
	compare(b, env, []string{"-C", main, "worktree", "list", "--porcelain"}, func() error {
		l, err := r.ListWorktrees(b.Context(), main)
		if err == nil && len(l.Entries) != 51 {
			err = fmt.Errorf("%d entries", len(l.Entries))
		}
		return err
	})
}

// BenchmarkInspectTree inspects a linked tree of 100,000 files in 1,000
// folders, with an untracked file and an ignored build folder.
func BenchmarkInspectTree(b *testing.B) {
	env := testEnv(b)
	main := b.TempDir()
	benchGit(b, env, main, "init", "--quiet")
	for d := range 1000 {
		dir := filepath.Join(main, fmt.Sprintf("d%03d", d/100), fmt.Sprintf("e%02d", d%100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", f)), []byte(dir), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(main, ".gitignore"), []byte("build/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	benchGit(b, env, main, "add", ".")
	benchGit(b, env, main, "commit", "--quiet", "-m", "files")
	tree := filepath.Join(b.TempDir(), "wt")
	benchGit(b, env, main, "worktree", "add", "--quiet", "-b", "wt", tree)
	if err := os.MkdirAll(filepath.Join(tree, "build", "obj"), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, p := range []string{filepath.Join(tree, "build", "obj", "a.o"), filepath.Join(tree, "notes.md")} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r := gitexec.New(gitexec.Options{Env: env})
	b.Cleanup(func() { r.Close() })
	compare(b, env, []string{"-C", tree, "status", "--porcelain", "--ignored"}, func() error {
		facts, err := r.InspectTree(b.Context(), tree)
		if err == nil && len(facts.Entries) != 2 {
			err = fmt.Errorf("%d entries", len(facts.Entries))
		}
		return err
	})
}

// compare runs git with args and call alternately, b.N times each.
func compare(b *testing.B, env, args []string, call func() error) {
	b.Helper()
	var bare, through time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
		bare += time.Since(start)
		start = time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		through += time.Since(start)
		n++
	}
	b.ReportMetric(float64(bare.Microseconds())/float64(n)/1000, "ms-git/op")
	b.ReportMetric(float64(through.Microseconds())/float64(n)/1000, "ms-runner/op")
	b.ReportMetric(float64(through)/float64(bare), "runner/git")
}
