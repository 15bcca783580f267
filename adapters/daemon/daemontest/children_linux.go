package daemontest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// childrenGrace bounds how long Kill waits for a killed daemon's
// workspace children: each ends on its own once its stdin (held by the
// daemon) reaches EOF, within the child's own 2 s shutdown grace plus
// its shells' and agents'.
const childrenGrace = 10 * time.Second

// awaitChildren waits, within childrenGrace, until no `wharf session`
// child of the state directory stateDir runs. A killed daemon's children
// outlive it briefly, still writing under stateDir (a conversation
// inventory), so a test that removes the directory at once would race
// them. The children are found by their command line, which names their
// socket inside stateDir; they are not this process's, so nothing
// signals their end and /proc is read again every 20 ms.
func awaitChildren(stateDir string) {
	deadline := time.Now().Add(childrenGrace)
	for len(sessionChildren(stateDir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// sessionChildren are the pids of the `wharf session` processes whose
// socket is under stateDir.
func sessionChildren(stateDir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	marker := []byte("\x00--socket\x00" + filepath.Clean(stateDir) + string(filepath.Separator))
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("\x00session\x00")) && bytes.Contains(b, marker) && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether pid has exited and waits to be reaped: it holds
// nothing any more.
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}
