package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// openFDs counts this process's open file descriptors (the entries of
// /proc/self/fd, less the one reading the directory holds), or -1 where
// /proc is not available.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries) - 1
}

// procStat is the part of /proc/<pid>/stat the zombie check reads.
type procStat struct {
	PID   int
	Comm  string
	State byte // R, S, D, Z, T, ...
	PPID  int
}

// parseProcStat reads one /proc/<pid>/stat line. The command name is in
// parentheses and may itself hold spaces and parentheses, so the fields
// after it are found from the last ')'.
func parseProcStat(line string) (procStat, error) {
	open := strings.IndexByte(line, '(')
	end := strings.LastIndexByte(line, ')')
	if open < 1 || end < open {
		return procStat{}, errors.New("stat: no command name")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return procStat{}, errors.New("stat: bad pid")
	}
	rest := strings.Fields(line[end+1:])
	if len(rest) < 2 || len(rest[0]) != 1 {
		return procStat{}, errors.New("stat: too few fields")
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil {
		return procStat{}, errors.New("stat: bad ppid")
	}
	return procStat{PID: pid, Comm: line[open+1 : end], State: rest[0][0], PPID: ppid}, nil
}

// childrenOf lists the processes whose parent is ppid, from /proc/*/stat
// (ok is false where /proc cannot be read). A process that exits during
// the scan is skipped.
func childrenOf(ppid int) (kids []procStat, ok bool) {
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(dirs) == 0 {
		return nil, false
	}
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		st, err := parseProcStat(strings.TrimSpace(string(b)))
		if err == nil && st.PPID == ppid {
			kids = append(kids, st)
		}
	}
	return kids, true
}

// zombies counts the children in state Z among kids.
func zombies(kids []procStat) int {
	n := 0
	for _, k := range kids {
		if k.State == 'Z' {
			n++
		}
	}
	return n
}

// gitChildren counts this process's children named git: the commands the
// Hub's git runner has running.
func gitChildren() int {
	kids, _ := childrenOf(os.Getpid())
	n := 0
	for _, k := range kids {
		if k.Comm == "git" && k.State != 'Z' {
			n++
		}
	}
	return n
}
