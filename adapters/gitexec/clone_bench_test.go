package gitexec_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/hub"
)

// BenchmarkClone compares a clone through Clone (a PTY, a credential
// projection, the output read as the core reads it) with a bare `git
// clone` of the same local repository of about 4 MB, alternating the
// two in each iteration so both see the same machine; it reports each
// one's time and their ratio.
func BenchmarkClone(b *testing.B) {
	env := testEnv(b)
	src := b.TempDir()
	benchGit(b, env, src, "init", "--quiet")
	for i := range 64 {
		data := make([]byte, 64<<10) // incompressible, like a repository's binary files
		_, _ = rand.Read(data)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%02d.bin", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchGit(b, env, src, "add", ".")
	benchGit(b, env, src, "commit", "--quiet", "-m", "data")
	rt, err := os.MkdirTemp("", "wcb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(rt) })
	r := gitexec.New(gitexec.Options{Env: env, RuntimeDir: filepath.Join(rt, "rt"), Command: []string{os.Args[0]}})
	b.Cleanup(func() { r.Close() })
	var bare, through time.Duration
	n := 0
	for b.Loop() {
		dest := b.TempDir()
		start := time.Now()
		cmd := exec.Command("git", "clone", "--quiet", "file://"+src, filepath.Join(dest, "bare"))
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git clone: %v\n%s", err, out)
		}
		bare += time.Since(start)

		start = time.Now()
		run, err := r.Clone(b.Context(), hub.CloneRequest{URL: "file://" + src, Target: filepath.Join(dest, "through")})
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 32<<10)
		for {
			if _, err := run.Read(buf); err != nil {
				break
			}
		}
		if err := run.Wait(); err != nil {
			b.Fatal(err)
		}
		through += time.Since(start)
		n++
	}
	b.ReportMetric(float64(bare.Microseconds())/float64(n)/1000, "ms-bare/op")
	b.ReportMetric(float64(through.Microseconds())/float64(n)/1000, "ms-clone/op")
	b.ReportMetric(float64(through)/float64(bare), "clone/bare")
}

// benchGit runs git to set the benchmark's scene up.
func benchGit(b *testing.B, env []string, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
