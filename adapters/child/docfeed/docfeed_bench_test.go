package docfeed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Benchmarks of the document feed on a generated repository, for the
// project's bench to report:
//
//	go test -run '^$' -bench . -benchtime 20x ./adapters/child/docfeed/
//
// Targets: the first complete snapshot of 50,000 files within 3 s, and a
// save reaching subscribers as a patch within 300 ms at the 99th
// percentile (the 150 ms quiet period included).

const benchFiles = 50_000

// generateRepo writes a committed repository of n files (100 per
// directory; markdown, text and some binary) and returns its root.
func generateRepo(b *testing.B, n int) (root string, env []string) {
	b.Helper()
	env = gitEnv(b)
	root = tempDir(b)
	git(b, env, root, "init", "-q")
	body := bytes.Repeat([]byte("Some words of a document, line after line.\n"), 5)
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("area%02d", i/5000), fmt.Sprintf("dir%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		name, data := fmt.Sprintf("doc%05d.md", i), body
		switch i % 10 {
		case 7, 8:
			name = fmt.Sprintf("notes%05d.txt", i)
		case 9:
			name, data = fmt.Sprintf("blob%05d.bin", i), []byte("\x00\x01binary")
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	writeFiles(b, root, map[string]string{".gitignore": "*.log\n"})
	git(b, env, root, "add", "-A")
	git(b, env, root, "commit", "-q", "-m", "generated")
	return root, env
}

func BenchmarkFeed50k(b *testing.B) {
	root, env := generateRepo(b, benchFiles)
	opts := Options{Env: env}

	b.Run("first-snapshot", func(b *testing.B) {
		var times []time.Duration
		var size int
		for b.Loop() {
			start := time.Now()
			f := New(root, opts)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- f.Run(ctx) }()
			follower := mustSubscribe(b, f)
			readUntil(b, follower, func(fr []byte) bool {
				return bytes.Contains(fr, []byte(`"discovery":{"status":"ready"`))
			})
			joiner := mustSubscribe(b, f)
			snap := readUntil(b, joiner, func([]byte) bool { return true })
			times = append(times, time.Since(start))
			size = len(snap)
			if !bytes.Contains(snap, []byte(fmt.Sprintf(`"discovered":%d`, benchFiles+1))) {
				b.Fatalf("snapshot incomplete: %.300s", snap)
			}
			follower.Close()
			joiner.Close()
			cancel()
			<-done
		}
		b.ReportMetric(ms(percentile(times, 50)), "p50-ms")
		b.ReportMetric(ms(slices.Max(times)), "max-ms")
		b.ReportMetric(float64(size)/(1<<20), "snapshot-MiB")
	})

	b.Run("save-to-patch", func(b *testing.B) {
		f := New(root, opts)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f.Run(ctx) }()
		defer func() { cancel(); <-done }()
		sub := mustSubscribe(b, f)
		defer sub.Close()
		readUntil(b, sub, func(fr []byte) bool { return bytes.Contains(fr, []byte(`"discovery":{"status":"ready"`)) })

		var times []time.Duration
		i := 0
		for b.Loop() {
			rel := filepath.Join("area03", fmt.Sprintf("dir%03d", 150+i%50), fmt.Sprintf("doc%05d.md", (150+i%50)*100))
			i++
			want := []byte(`"changedId":"` + filepath.Join(root, rel) + `"`)
			start := time.Now()
			if err := os.WriteFile(filepath.Join(root, rel), fmt.Appendf(nil, "save %d\n", i), 0o644); err != nil {
				b.Fatal(err)
			}
			readUntil(b, sub, func(fr []byte) bool { return bytes.Contains(fr, want) })
			times = append(times, time.Since(start))
		}
		b.ReportMetric(ms(percentile(times, 50)), "p50-ms")
		b.ReportMetric(ms(percentile(times, 99)), "p99-ms")
		b.ReportMetric(ms(slices.Max(times)), "max-ms")
	})
}

func mustSubscribe(b *testing.B, f *Feed) *Subscription {
	sub, err := f.Subscribe(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	return sub
}

// readUntil reads frames until pred holds for one, within 30 s.
func readUntil(b *testing.B, sub *Subscription, pred func([]byte) bool) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		fr, err := sub.Next(ctx)
		if err != nil {
			b.Fatalf("waiting for a frame: %v", err)
		}
		if pred(fr) {
			return fr
		}
	}
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
