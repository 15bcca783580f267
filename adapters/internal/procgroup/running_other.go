//go:build unix && !linux

package procgroup

import "syscall"

// Running reports whether group pgid has a member (a zombie counts:
// nothing tells them apart here).
func Running(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
