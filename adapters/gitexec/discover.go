package gitexec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// repositoryMarker returns the first place, from dir up to the root, where
// git's repository discovery would stop: a ".git" entry of any type (a
// directory, or a file or link naming a linked worktree's git directory),
// or a directory that looks like a bare repository. "" means there is none,
// so git had nothing to find. dir itself must exist. An entry that cannot
// be examined is an error: the answer is then unknown, not "none".
func repositoryMarker(dir string) (string, error) {
	if _, err := os.Stat(dir); err != nil {
		return "", err
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		_, err := os.Lstat(dotGit)
		if err == nil {
			return dotGit, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if looksBare(d) {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", nil
		}
	}
}

// looksBare reports whether d has the layout git itself checks before it
// takes a directory for a git directory: a HEAD that is not a directory,
// beside objects/ and refs/ directories.
func looksBare(d string) bool {
	head, err := os.Stat(filepath.Join(d, "HEAD"))
	if err != nil || head.IsDir() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(d, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
