package worktree

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// StampPrefix begins every stamp the Hub writes into a linked tree's git
// directory; a UUID follows.
const StampPrefix = "wharf-checkout-"

// RepositoryID names a repository by its canonical common Git
// directory: the first 32 hex digits of its SHA-256.
func RepositoryID(commonDir string) string { return digest(commonDir) }

// CheckoutID names a checkout by its canonical git directory (the common
// directory for the main checkout, <common>/worktrees/<name> for a
// linked tree) and, when the Hub stamped the tree, the stamp: the first
// 32 hex digits of SHA-256 over "<gitdir>" or "<gitdir>\n<stamp>".
func CheckoutID(gitDir, stamp string) string {
	if stamp == "" {
		return digest(gitDir)
	}
	return digest(gitDir + "\n" + stamp)
}

// ValidStamp reports whether s is a stamp the Hub could have written:
// StampPrefix and a lower-case UUID.
func ValidStamp(s string) bool {
	id, ok := strings.CutPrefix(s, StampPrefix)
	if !ok || len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
			return false
		}
	}
	return true
}

// ValidID reports whether s has the shape of a repository or checkout
// id: 32 lower-case hex digits.
func ValidID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
