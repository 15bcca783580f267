package worktree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// maxSample is how many paths a category shows.
const maxSample = 5

// fingerprintDomain begins every fingerprint's input, so it can mean
// nothing else.
const fingerprintDomain = "wharf-worktree-local-data-v1"

// Category is the local-data category of a git status XY code: "??"
// untracked, "!!" ignored, any other a change to a tracked file.
func Category(code string) hub.LocalDataCategory {
	switch code {
	case "??":
		return hub.LocalUntracked
	case "!!":
		return hub.LocalIgnored
	}
	return hub.LocalTracked
}

// Summarize describes what deleting the checkout checkoutID would lose,
// from git status's entries: per category present, its count and first
// five paths in byte order (a folder ends in "/"), and one fingerprint
// over every entry. It is nil for a clean tree.
//
// The fingerprint is the lower-case hex SHA-256 of
// "wharf-worktree-local-data-v1\x00<checkoutID>\x00" followed, for every
// entry sorted by path, by "<XY>\x00<path>\x00". It covers the entries,
// not the files' contents: editing a file already listed keeps it, while
// staging, deleting or adding a file, or changing what is ignored,
// changes it. Nothing is stored between a preflight and a delete: the
// delete recomputes it.
func Summarize(checkoutID string, entries []hub.StatusEntry) *hub.LocalData {
	if len(entries) == 0 {
		return nil
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b hub.StatusEntry) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Code, b.Code)
	})
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", fingerprintDomain, checkoutID)
	ld := &hub.LocalData{Categories: map[hub.LocalDataCategory]hub.LocalDataSummary{}}
	for _, e := range sorted {
		fmt.Fprintf(h, "%s\x00%s\x00", e.Code, e.Path)
		c := Category(e.Code)
		s := ld.Categories[c]
		s.Count++
		if len(s.Sample) < maxSample {
			s.Sample = append(s.Sample, e.Path)
		}
		ld.Categories[c] = s
	}
	ld.Fingerprint = hex.EncodeToString(h.Sum(nil))
	return ld
}

// ValidFingerprint reports whether s has a fingerprint's shape: 64
// lower-case hex digits.
func ValidFingerprint(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckLocalData applies the local-data rule at one of delete's checks:
// a clean tree proceeds, whatever was sent; local data needs the
// fingerprint the person confirmed, and one that no longer matches means
// the files changed since: only a new preflight can succeed.
func CheckLocalData(ld *hub.LocalData, confirmed string) *hub.WorktreeError {
	switch {
	case ld == nil:
		return nil
	case confirmed == "":
		e := hub.WorktreeRefusal(hub.WTLocalData, "The worktree has "+describe(ld)+". Review them and confirm to delete. Nothing was removed.")
		return e.WithRetry(hub.WTRetryDelete)
	case confirmed != ld.Fingerprint:
		e := hub.WorktreeRefusal(hub.WTLocalData, "The worktree's files changed while deletion was prepared. Review the deletion again. Nothing was removed.")
		return e.WithRetry(hub.WTRetryRefresh)
	}
	return nil
}

// describe names the first category present, with its count.
func describe(ld *hub.LocalData) string {
	for _, c := range []struct {
		cat  hub.LocalDataCategory
		text string
	}{
		{hub.LocalTracked, "uncommitted changes (%d files)"},
		{hub.LocalUntracked, "untracked files (%d files)"},
		{hub.LocalIgnored, "ignored files or folders (%d items)"},
	} {
		if s, ok := ld.Categories[c.cat]; ok {
			return fmt.Sprintf(c.text, s.Count)
		}
	}
	return "local data"
}

// NeedsForce reports whether git must be given its one --force to remove
// a tree with this local data: tracked changes or untracked files; a
// tree with only ignored files, or none, is removed without it.
func NeedsForce(ld *hub.LocalData) bool {
	if ld == nil {
		return false
	}
	_, tracked := ld.Categories[hub.LocalTracked]
	_, untracked := ld.Categories[hub.LocalUntracked]
	return tracked || untracked
}
