package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// W8: a clone job against a bare `git clone` of the same local
// repository (file://, so both go through git's pack transport), run
// alternately in the same run; the job's events are followed by 10
// watchers at once, which must all see its result.

const (
	w8Megabytes = 200 // the source repository's size, incompressible
	w8Rounds    = 3
	w8Watchers  = 10
	w8MaxRatio  = 1.05
)

func runW8(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 0)
	if err != nil {
		return nil, err
	}
	root, err := mkTemp(e, "wharf-bench-w8-")
	if err != nil {
		return nil, err
	}
	e.progress("W8: making a %d MB repository", w8Megabytes)
	src := filepath.Join(root, "source")
	if err := makeBigRepo(ctx, src, w8Megabytes); err != nil {
		return nil, err
	}
	var bare, job []time.Duration
	seen := 0
	for i := range w8Rounds {
		e.progress("W8: round %d/%d", i+1, w8Rounds)
		start := time.Now()
		if out, err := exec.CommandContext(ctx, "git", "clone", "-q", "--", "file://"+src, filepath.Join(root, fmt.Sprintf("bare-%d", i))).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git clone: %v: %s", err, out)
		}
		bare = append(bare, time.Since(start))
		d, watchers, err := cloneThroughJob(ctx, h.w, "file://"+src, root, fmt.Sprintf("job-%d", i))
		if err != nil {
			return nil, err
		}
		job = append(job, d)
		seen += watchers
	}
	r := ratio(float64(medianDuration(job)), float64(medianDuration(bare)))
	return []verdict{
		{"W8 clone job vs bare git clone", fmt.Sprintf("%.2f × (median of %d; job %s, bare %s; rounds %s)", r, w8Rounds,
			ms(medianDuration(job)), ms(medianDuration(bare)), roundRatios(job, bare)), fmt.Sprintf("≤ %.2f ×", w8MaxRatio), r <= w8MaxRatio},
		{"W8 watchers see the result", fmt.Sprintf("%d of %d", seen, w8Rounds*w8Watchers), "all", seen == w8Rounds*w8Watchers},
	}, nil
}

// cloneThroughJob creates a clone job and follows it with w8Watchers
// streams until its result: the time from the request to the result,
// and how many watchers saw a succeeded result.
func cloneThroughJob(ctx context.Context, w *wharf, url, dest, name string) (time.Duration, int, error) {
	start := time.Now()
	var res struct {
		JobID string `json:"jobId"`
	}
	status, _, raw, err := call(ctx, w.addr, http.MethodPost, "/api/hub/clone-jobs", bearer(w.session),
		map[string]any{"url": url, "dest": dest, "folderName": name}, nil)
	if err != nil || status != http.StatusAccepted || json.Unmarshal(raw, &res) != nil {
		return 0, 0, fmt.Errorf("clone job: %d %s %v", status, raw, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen, took := 0, time.Duration(0)
	for range w8Watchers {
		wg.Go(func() {
			ok, at := watchClone(ctx, w, res.JobID)
			mu.Lock()
			defer mu.Unlock()
			if ok {
				seen++
				took = max(took, at.Sub(start))
			}
		})
	}
	wg.Wait()
	return took, seen, nil
}

// watchClone reads a job's stream until its result: whether it
// succeeded, and when the result came.
func watchClone(ctx context.Context, w *wharf, id string) (bool, time.Time) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+w.addr+"/api/hub/clone-jobs/"+id+"/events", nil)
	if err != nil {
		return false, time.Time{}
	}
	req.Header = bearer(w.session)
	client := &http.Client{Transport: httpClient.Transport} // no overall timeout: the stream lasts the clone
	resp, err := client.Do(req)
	if err != nil {
		return false, time.Time{}
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	result := false
	for sc.Scan() {
		line := sc.Text()
		if line == "event: result" {
			result = true
		}
		if result && strings.HasPrefix(line, "data: ") {
			return strings.Contains(line, `"status":"succeeded"`), time.Now()
		}
	}
	return false, time.Time{}
}

// makeBigRepo makes a repository at dir of about mb megabytes of random
// (incompressible) files in one commit.
func makeBigRepo(ctx context.Context, dir string, mb int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	chunk := make([]byte, 1<<20)
	for i := range mb {
		if _, err := io.ReadFull(rand.Reader, chunk); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("blob-%03d.bin", i)), chunk, 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."},
		{"-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "blobs"}} {
		if out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return nil
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func roundRatios(job, bare []time.Duration) string {
	parts := make([]string, len(job))
	for i := range job {
		parts[i] = fmt.Sprintf("%.2f", ratio(float64(job[i]), float64(bare[i])))
	}
	return strings.Join(parts, ", ")
}
