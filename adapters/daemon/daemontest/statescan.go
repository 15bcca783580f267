package daemontest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// ScanStateDir records the content of every file of the state directory
// dir as it is now, the database, its WAL and shared memory included: only
// digests and argon2id hashes may be stored there, so a raw secret there
// is a leak (in a freed page too). when names the moment in reports
// ("while a workspace runs"). Sockets are not read. It returns the files
// it read, relative to dir.
func (s *Secrets) ScanStateDir(dir, when string) ([]string, error) {
	s.mu.Lock()
	s.scans++
	scan := s.scans
	s.mu.Unlock()
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since it was listed (SQLite's -shm at a close)
		} else if err != nil {
			return err
		}
		p := s.add(&place{what: fmt.Sprintf("the state directory's %s (scan %d, %s)", rel, scan, when), file: rel})
		p.Write(b)
		files = append(files, rel)
		return nil
	})
	return files, err
}

// CheckModes fails tb for every entry of the state directory dir whose
// mode is not private: the directory and every directory in it (sessions/)
// 0700, every file (wharf.db, -wal, -shm, wharf.db-gen, wharf.lock, …)
// and every socket (a running workspace session's) 0600, but for a
// session's own scripts (SessionScript), private and executable (0700),
// and nothing else (a symbolic link) at all. It returns what it checked, as "<rel> <mode>",
// so a test can show the socket it expected was there.
func CheckModes(tb testing.TB, dir string) []string {
	tb.Helper()
	checked, problems, err := StateModes(dir)
	if err != nil {
		tb.Errorf("state directory modes: %v", err)
	}
	for _, p := range problems {
		tb.Errorf("state directory modes: %s", p)
	}
	return checked
}

// StateModes is CheckModes' check without a testing.TB: it returns what it
// checked and what it found wrong.
func StateModes(dir string) (checked, problems []string, err error) {
	err = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since it was listed (a socket at a session's end)
		} else if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		mode := fi.Mode()
		checked = append(checked, fmt.Sprintf("%s %v", rel, mode))
		var want fs.FileMode
		switch mode.Type() {
		case fs.ModeDir:
			want = 0o700
		case 0, fs.ModeSocket:
			want = 0o600
		default:
			problems = append(problems, fmt.Sprintf("%s is a %v, neither a directory, a file nor a socket", rel, mode.Type()))
			return nil
		}
		if mode.Perm() != want && !(mode.IsRegular() && mode.Perm() == 0o700 && SessionScript(path)) {
			problems = append(problems, fmt.Sprintf("%s has mode %#o, want %#o", rel, mode.Perm(), want))
		}
		return nil
	})
	return checked, problems, err
}

// sessionScriptHead begins every script the local backend writes into a
// running session's runtime folder (its git, its gpg program).
const sessionScriptHead = "#!/bin/sh\n# Made by Wharf for one workspace session; removed when it ends.\n"

// SessionScript reports whether the file at path is a script the local
// backend made for a session: those are executable, so 0700.
func SessionScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sessionScriptHead))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == sessionScriptHead
}
