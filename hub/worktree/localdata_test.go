package worktree_test

import (
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/worktree"
)

const someCheckout = "0123456789abcdef0123456789abcdef"

func TestLocalDataIsCountedSampledAndFingerprinted(t *testing.T) {
	is := is.New(t)
	entries := []hub.StatusEntry{
		{Code: "??", Path: "notes/f.txt"}, {Code: " M", Path: "a.go"}, {Code: "!!", Path: "build/"},
		{Code: "??", Path: "a.txt"}, {Code: "??", Path: "b.txt"}, {Code: "??", Path: "c.txt"},
		{Code: "??", Path: "d.txt"}, {Code: "A ", Path: "new.go"},
	}
	ld := worktree.Summarize(someCheckout, entries)
	is.Equal(ld.Categories[hub.LocalTracked], hub.LocalDataSummary{Count: 2, Sample: []string{"a.go", "new.go"}})
	is.Equal(ld.Categories[hub.LocalUntracked], hub.LocalDataSummary{Count: 5,
		Sample: []string{"a.txt", "b.txt", "c.txt", "d.txt", "notes/f.txt"}}) // five, sorted
	is.Equal(ld.Categories[hub.LocalIgnored], hub.LocalDataSummary{Count: 1, Sample: []string{"build/"}}) // a folder as dir/
	is.True(worktree.ValidFingerprint(ld.Fingerprint))                                                    // 64 hex digits

	reordered := append([]hub.StatusEntry{entries[7]}, entries[:7]...)
	is.Equal(worktree.Summarize(someCheckout, reordered).Fingerprint, ld.Fingerprint) // order does not count
	staged := slices.Clone(entries)
	staged[1] = hub.StatusEntry{Code: "M ", Path: "a.go"}
	is.True(worktree.Summarize(someCheckout, staged).Fingerprint != ld.Fingerprint)                        // staging a file changes it
	is.True(worktree.Summarize(someCheckout, entries[1:]).Fingerprint != ld.Fingerprint)                   // so does a file less
	is.True(worktree.Summarize("fedcba9876543210fedcba9876543210", entries).Fingerprint != ld.Fingerprint) // and another checkout
	is.Equal(worktree.Summarize(someCheckout, nil), (*hub.LocalData)(nil))                                 // a clean tree has none
}

func TestDeleteNeedsTheFingerprintOfTheLocalDataItWouldLose(t *testing.T) {
	untracked := worktree.Summarize(someCheckout, []hub.StatusEntry{{Code: "??", Path: "x"}, {Code: "!!", Path: "out/"}})
	ignored := worktree.Summarize(someCheckout, []hub.StatusEntry{{Code: "!!", Path: "out/"}})
	tracked := worktree.Summarize(someCheckout, []hub.StatusEntry{{Code: " D", Path: "gone.go"}})
	for _, tc := range []struct {
		name      string
		ld        *hub.LocalData
		confirmed string
		code      hub.WorktreeCode
		retry     hub.WorktreeRetry
		message   string
	}{
		{"a clean tree, nothing sent", nil, "", "", "", ""},
		{"a clean tree, a fingerprint sent", nil, untracked.Fingerprint, "", "", ""},
		{"local data unacknowledged", untracked, "", hub.WTLocalData, hub.WTRetryDelete,
			"The worktree has untracked files (1 files). Review them and confirm to delete. Nothing was removed."},
		{"changes unacknowledged", tracked, "", hub.WTLocalData, hub.WTRetryDelete,
			"The worktree has uncommitted changes (1 files). Review them and confirm to delete. Nothing was removed."},
		{"ignored files unacknowledged", ignored, "", hub.WTLocalData, hub.WTRetryDelete,
			"The worktree has ignored files or folders (1 items). Review them and confirm to delete. Nothing was removed."},
		{"a stale fingerprint", untracked, ignored.Fingerprint, hub.WTLocalData, hub.WTRetryRefresh,
			"The worktree's files changed while deletion was prepared. Review the deletion again. Nothing was removed."},
		{"the matching fingerprint", untracked, untracked.Fingerprint, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := worktree.CheckLocalData(tc.ld, tc.confirmed)
			if tc.code == "" {
				is.True(err == nil) // proceeds
				return
			}
			is.Equal(err.Code, tc.code)   // refused
			is.Equal(err.Retry, tc.retry) // with what to do next
			is.Equal(err.Message, tc.message)
		})
	}
	is := is.New(t)
	is.True(worktree.NeedsForce(untracked) && worktree.NeedsForce(tracked)) // git needs its one --force for these
	is.True(!worktree.NeedsForce(ignored) && !worktree.NeedsForce(nil))     // and not for ignored files alone
	is.True(!worktree.ValidFingerprint(untracked.Fingerprint[:63]))         // a short fingerprint is malformed
	is.True(!worktree.ValidFingerprint("G" + untracked.Fingerprint[1:]))    // as is one not lower-case hex
}
