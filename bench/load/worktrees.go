package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// W14: the worktree family against plain git, in the same run. The
// inventory of a repository with 50 worktrees (GET /api/hub/worktrees:
// git's listing, a stamp read per tree, the registry and the provenance
// records) against `git worktree list --porcelain` alone, by p99 of
// alternating samples; and the preflight of a 100,000-file worktree
// (POST /api/hub/worktrees/preflight-delete: its markers, its status
// with ignored files, its index for nested repositories) against `git
// status --porcelain --ignored` alone, by median.

const (
	w14Trees          = 50
	w14InvSamples     = 200
	w14Files          = 100_000
	w14PreSamples     = 7
	w14MaxRatio       = 2.0
	w14FilesPerFolder = 1000
)

func runW14(ctx context.Context, e *env) ([]verdict, error) {
	h, err := e.hub(ctx, 0)
	if err != nil {
		return nil, err
	}
	w := h.w
	root, err := mkTemp(e, "wharf-bench-w14-")
	if err != nil {
		return nil, err
	}
	register := func(dir string) (string, error) {
		var act struct{ ID string }
		if status, _, raw, err := call(ctx, w.addr, http.MethodPost, "/api/hub/workspaces", bearer(w.session), map[string]any{"path": dir}, &act); err != nil || status >= 300 {
			return "", fmt.Errorf("register: %d %s %v", status, raw, err)
		}
		return act.ID, nil
	}
	create := func(source, branch string) (string, error) {
		var res struct {
			OK       bool
			Checkout struct{ Path string }
		}
		body := map[string]any{"sourceWorkspaceId": source, "mode": "new-branch", "branch": branch,
			"base": map[string]string{"kind": "local", "ref": "main"}}
		if status, _, raw, err := call(ctx, w.addr, http.MethodPost, "/api/hub/worktrees/create", bearer(w.session), body, &res); err != nil || status != http.StatusOK || !res.OK {
			return "", fmt.Errorf("create: %d %s %v", status, raw, err)
		}
		return res.Checkout.Path, nil
	}
	repo, big := filepath.Join(root, "app"), filepath.Join(root, "big")
	if err := makeManyFiles(ctx, repo, 20); err != nil {
		return nil, err
	}
	app, err := register(repo)
	if err != nil {
		return nil, err
	}
	e.progress("W14: %d worktrees through the Hub", w14Trees)
	for i := range w14Trees {
		if _, err := create(app, fmt.Sprintf("task-%02d", i)); err != nil {
			return nil, err
		}
	}
	e.progress("W14: a repository with %d files and one worktree", w14Files)
	if err := makeManyFiles(ctx, big, w14Files); err != nil {
		return nil, err
	}
	bigID, err := register(big)
	if err != nil {
		return nil, err
	}
	first, err := create(bigID, "task")
	if err != nil {
		return nil, err
	}

	e.progress("W14: inventory, %d samples each", w14InvSamples)
	var hubInv, gitInv []time.Duration
	for range w14InvSamples {
		start := time.Now()
		if status, _, raw, err := call(ctx, w.addr, http.MethodGet, "/api/hub/worktrees?source="+app, bearer(w.session), nil, nil); err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("inventory: %d %.200s %v", status, raw, err)
		}
		hubInv = append(hubInv, time.Since(start))
		start = time.Now()
		if out, err := exec.CommandContext(ctx, "git", "-C", repo, "worktree", "list", "--porcelain").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git worktree list: %v: %s", err, out)
		}
		gitInv = append(gitInv, time.Since(start))
	}
	slices.Sort(hubInv)
	slices.Sort(gitInv)
	invRatio := ratio(float64(percentile(hubInv, 99)), float64(percentile(gitInv, 99)))

	e.progress("W14: preflight of a %d-file worktree, %d samples each", w14Files, w14PreSamples)
	var hubPre, gitPre []time.Duration
	for range w14PreSamples {
		start := time.Now()
		var p struct{ OK bool }
		if status, _, raw, err := call(ctx, w.addr, http.MethodPost, "/api/hub/worktrees/preflight-delete", bearer(w.session),
			map[string]any{"sourceWorkspaceId": bigID, "reference": "task"}, &p); err != nil || status != http.StatusOK || !p.OK {
			return nil, fmt.Errorf("preflight: %d %.300s %v", status, raw, err)
		}
		hubPre = append(hubPre, time.Since(start))
		start = time.Now()
		if out, err := exec.CommandContext(ctx, "git", "-C", first, "status", "--porcelain", "--ignored").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git status: %v: %s", err, out)
		}
		gitPre = append(gitPre, time.Since(start))
	}
	preRatio := ratio(float64(medianDuration(hubPre)), float64(medianDuration(gitPre)))
	return []verdict{
		{"W14 inventory of 50 worktrees, p99", fmt.Sprintf("%.2f × git worktree list --porcelain (p99 of %d: %s vs %s; medians %s vs %s)",
			invRatio, w14InvSamples, ms(percentile(hubInv, 99)), ms(percentile(gitInv, 99)), ms(medianDuration(hubInv)), ms(medianDuration(gitInv))),
			fmt.Sprintf("≤ %.0f ×", w14MaxRatio), invRatio <= w14MaxRatio},
		{"W14 preflight of a 100,000-file worktree", fmt.Sprintf("%.2f × git status --porcelain --ignored (median of %d: %s vs %s; rounds %s)",
			preRatio, w14PreSamples, ms(medianDuration(hubPre)), ms(medianDuration(gitPre)), roundRatios(hubPre, gitPre)),
			fmt.Sprintf("≤ %.0f ×", w14MaxRatio), preRatio <= w14MaxRatio},
	}, nil
}

// makeManyFiles makes a repository at dir of n small files, in folders
// of w14FilesPerFolder, committed on main.
func makeManyFiles(ctx context.Context, dir string, n int) error {
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/w14FilesPerFolder))
		if i%w14FilesPerFolder == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."},
		{"-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "files"}} {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
