package docfeed

import (
	"context"
	"encoding/json"
	"path/filepath"
	"syscall"
	"time"
)

// refresher keeps repository freshness, independently of file patches. A
// refresh is requested by every published file batch and by a change of
// Git metadata, and runs after the same quiet/max-delay debounce as file
// batches; requests arriving during a refresh make its result stale and
// schedule the next. It returns when ctx ends, killing a running git.
//
// Freshness follows the contract's RepositoryState: pending at generation
// 0; a starting refresh is published as stale (or pending before the first
// success); success is ready (stale when requests arrived meanwhile) at
// generation+1; failure is error with a message, generation unchanged.
func (f *Feed) refresher(ctx context.Context) {
	poll := time.NewTicker(f.opts.PollInterval)
	defer poll.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var (
		pending     bool
		first, last time.Time
		seen        string // the metadata fingerprint at the last refresh
		branch      string
	)
	request := func(extend bool) {
		now := time.Now()
		if !pending {
			pending, first = true, now
		} else if !extend {
			return
		}
		last = now
	}
	check := func() {
		// Polling is for subscribers: with none, nobody sees the result.
		if f.state.subscribers() > 0 && metadataFingerprint(f.currentRepo(), branch) != seen {
			request(false)
		}
	}
	for {
		var fire <-chan time.Time
		var due time.Time
		if pending {
			due = last.Add(f.opts.Quiet)
			if limit := first.Add(f.opts.MaxDelay); limit.Before(due) {
				due = limit
			}
			timer.Reset(time.Until(due))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-f.refreshReq:
			request(true)
		case <-poll.C:
			check()
		case <-f.pollNow:
			check()
		case <-fire:
			pending = false
			repo := f.currentRepo()
			seen = metadataFingerprint(repo, branch)
			f.state.repoStarting()
			res, err := readRepository(ctx, f.git, f.root, repo, f.opts.Now())
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				f.log.Warn("repository refresh failed", "err", err)
				f.state.repoFailed("the repository could not be read")
				continue
			}
			if res.branch != branch {
				branch = res.branch
				seen = metadataFingerprint(repo, branch)
			}
			f.state.repoDone(res.byTarget, len(f.refreshReq) > 0)
		}
		timer.Stop()
	}
}

// currentRepo is the repository found by the latest (re)index.
func (f *Feed) currentRepo() repoInfo {
	if r := f.repo.Load(); r != nil {
		return *r
	}
	return repoInfo{}
}

// metadataFingerprint identifies the state of the Git files whose change
// means the repository view may be stale: HEAD, the index, the HEAD log,
// packed refs, config, the branch list and the current and default
// branches' refs. Each contributes its inode, size, mtime and ctime (a
// rename-over changes the inode even within one timestamp tick).
func metadataFingerprint(repo repoInfo, branch string) string {
	if !repo.isGit() {
		return ""
	}
	paths := []string{
		filepath.Join(repo.GitDir, "HEAD"),
		filepath.Join(repo.GitDir, "index"),
		filepath.Join(repo.GitDir, "logs", "HEAD"),
		filepath.Join(repo.CommonDir, "packed-refs"),
		filepath.Join(repo.CommonDir, "config"),
		filepath.Join(repo.CommonDir, "refs", "heads"),
		filepath.Join(repo.CommonDir, "refs", "remotes", "origin", "HEAD"),
	}
	for _, b := range []string{branch, "main", "master"} {
		if b != "" {
			paths = append(paths,
				filepath.Join(repo.CommonDir, "refs", "heads", filepath.FromSlash(b)),
				filepath.Join(repo.CommonDir, "refs", "remotes", "origin", filepath.FromSlash(b)))
		}
	}
	buf := make([]byte, 0, len(paths)*40)
	for _, p := range paths {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			buf = append(buf, '-', 0)
			continue
		}
		for _, v := range []int64{int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()} {
			buf = appendInt(buf, v)
		}
		buf = append(buf, 0)
	}
	return string(buf)
}

func appendInt(b []byte, v int64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// repoStarting publishes the start of a refresh when it changes the
// freshness (ready or error becomes stale, or pending before any success).
func (s *state) repoStarting() {
	s.mu.Lock()
	cur := s.repoState
	s.mu.Unlock()
	next := repositoryState{Generation: cur.Generation, Status: repoStale}
	if cur.Generation == 0 {
		next.Status = repoPending
	}
	if next != cur {
		s.publish(update{repo: &repoUpdate{state: next}})
	}
}

// repoDone publishes a successful refresh.
func (s *state) repoDone(repos map[CompareTarget]json.RawMessage, staleAlready bool) {
	s.mu.Lock()
	gen := s.repoState.Generation + 1
	s.mu.Unlock()
	next := repositoryState{Generation: gen, Status: repoReady}
	if staleAlready {
		next.Status = repoStale
	}
	s.publish(update{repo: &repoUpdate{state: next, repos: repos}})
}

// repoFailed publishes a failed refresh; message is public.
func (s *state) repoFailed(message string) {
	s.mu.Lock()
	gen := s.repoState.Generation
	s.mu.Unlock()
	s.publish(update{repo: &repoUpdate{state: repositoryState{Generation: gen, Status: repoError, Message: message}}})
}
