package procgroup

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Running reports whether a process of group pgid is alive and not a
// zombie, from /proc. A zombie runs nothing, and a killed group's members
// whose parent died wait as zombies for the system's init, which may be
// slow to reap them (or, in a container, never does).
func Running(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return unix.Kill(-pgid, 0) == nil
	}
	want := []byte(strconv.Itoa(pgid))
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything, so
		// the fields are read after its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
