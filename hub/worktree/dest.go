package worktree

import (
	"fmt"
	"path"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// maxFolder is the longest folder name derived from a branch, in bytes
// (all of them ASCII).
const maxFolder = 100

// TreesDir is the folder beside a main checkout that holds the trees the
// Hub creates: <main>.worktrees.
func TreesDir(main string) string { return path.Clean(main) + ".worktrees" }

// FolderName is the folder a branch's tree gets: every character outside
// [A-Za-z0-9_-] becomes "-", letters are lower-cased, the name is cut to
// 100 characters and stripped of leading dashes; "branch" when nothing
// remains. (The earlier system counted UTF-16 units, so a character
// outside the Basic Multilingual Plane became "--"; here each character
// is one "-".)
func FolderName(branch string) string {
	var b strings.Builder
	for _, r := range branch {
		if b.Len() == maxFolder {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteByte('-')
		}
	}
	name := strings.TrimLeft(b.String(), "-")
	if name == "" {
		return "branch"
	}
	return name
}

// FallbackFolder is the one other folder a branch's tree may get when
// FolderName's is taken: FolderName, "-", and the 8 hex digits of the
// FNV-1a (32-bit) hash of the exact branch, one code point at a time.
// Two branches with one folder name (feature/x and feature-x) thus get
// two folders.
func FallbackFolder(branch string) string {
	return fmt.Sprintf("%s-%08x", FolderName(branch), fnv1a(branch))
}

// fnv1a is FNV-1a over the code points of s: offset basis 2166136261,
// prime 16777619, XOR then a 32-bit multiply per code point.
func fnv1a(s string) uint32 {
	h := uint32(2166136261)
	for _, r := range s {
		h ^= uint32(r)
		h *= 16777619
	}
	return h
}

// Destinations are the two folders, in order, a branch's tree may be
// made in beside the main checkout main: the caller takes the first
// where nothing is (an unreadable one counts as taken), and refuses with
// destination-occupied when both are.
func Destinations(main, branch string) [2]string {
	dir := TreesDir(main)
	return [2]string{path.Join(dir, FolderName(branch)), path.Join(dir, FallbackFolder(branch))}
}

// Occupied is the refusal when both destinations are taken.
func Occupied() *hub.WorktreeError {
	return hub.WorktreeRefusal(hub.WTDestinationOccupied, "Both folders this branch's worktree could go in are taken. Nothing was created.")
}
