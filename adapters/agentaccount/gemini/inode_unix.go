//go:build unix

package gemini

import (
	"io/fs"
	"syscall"
)

// inode is fi's inode number, part of a file's stamp: a file replaced by
// a rename has another.
func inode(fi fs.FileInfo) any {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return nil
}
