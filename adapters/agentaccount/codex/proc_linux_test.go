package codex_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A killed process whose parent died lingers as a zombie until init reaps
// it, whenever that is: these read /proc and count a zombie as gone.

// groupGone reports whether no live process is left in process group
// pgid.
func groupGone(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, stat := range stats {
		if state, group, ok := procStat(stat); ok && group == pgid && live(state) {
			return false
		}
	}
	return true
}

// processGone reports whether pid is not a live process.
func processGone(pid int) bool {
	state, _, ok := procStat(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	return !ok || !live(state)
}

// procStat reads a /proc/<pid>/stat's state and process group.
func procStat(path string) (state string, pgrp int, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return "", 0, false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(fields[2])
	return fields[0], pgrp, err == nil
}

func live(state string) bool { return state != "Z" && state != "X" }
