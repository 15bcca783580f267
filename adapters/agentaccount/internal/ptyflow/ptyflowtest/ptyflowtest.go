// Package ptyflowtest helps the agent-login drivers' tests prove that
// nothing a driver started is left running.
package ptyflowtest

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
)

// Supported reports whether Left can see processes' environments here
// (Linux's /proc).
func Supported() bool { return runtime.GOOS == "linux" }

// Left lists the processes alive (not zombies) whose environment holds
// the entry entry ("HOME=/tmp/…"): a test gives each driver a HOME of
// its own, which every program the driver starts inherits. Processes
// whose environment cannot be read (another user's) are not listed.
func Left(entry string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(entry)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !holds(env, want) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if f := bytes.Fields(stat[i+1:]); i < 0 || len(f) == 0 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// holds reports whether the NUL-separated environment env has entry.
func holds(env, entry []byte) bool {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, entry) {
			return true
		}
	}
	return false
}
