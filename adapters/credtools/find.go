package credtools

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Bounds on the Hub's PATH when a tool is looked for on it.
const (
	// MaxPathEntries is how many of PATH's folders are looked in, from
	// the first.
	MaxPathEntries = 128
	// MaxPathLen is the longest PATH looked in at all, in bytes: a longer
	// one finds nothing.
	MaxPathLen = 32768
)

// executable reports whether p is an absolute path to a regular file
// (through symbolic links) that this process may execute.
func executable(p string) bool {
	if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 {
		return false
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	// Effective ids, as execve checks them.
	return unix.Faccessat(unix.AT_FDCWD, p, unix.X_OK, unix.AT_EACCESS) == nil
}

// lookPath finds name in the folders of pathList, the first one holding
// it executable, and returns its path, or "" (see MaxPathEntries,
// MaxPathLen). Empty and relative entries are skipped: they mean the
// Hub's working folder, which is nobody's choice of tool.
func lookPath(name, pathList string) string {
	if len(pathList) > MaxPathLen {
		return ""
	}
	dirs := filepath.SplitList(pathList)
	for _, dir := range dirs[:min(len(dirs), MaxPathEntries)] {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); executable(p) {
			return p
		}
	}
	return ""
}
