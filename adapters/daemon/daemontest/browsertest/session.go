package browsertest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// SessionEnv returns the environment of workspace id's session child of
// the daemon (`wharf session ... --workspace-id id`), read from /proc: what
// the session's shells, agents and git inherit, so that a test can run a
// command as one of them would (`wharf git-credential get`, say). It
// needs Linux's /proc and a daemon this package started as a process.
func (h *Hub) SessionEnv(id string) ([]string, error) {
	if h.cmd == nil || h.cmd.Process == nil {
		return nil, errors.New("the Hub runs in this process: it has no session children")
	}
	daemon := h.cmd.Process.Pid
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentOf(pid) != daemon || !runsSession(pid, id) {
			continue
		}
		found = append(found, pid)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%d session children of the daemon for workspace %s", len(found), id)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(found[0]) + "/environ")
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), nil
}

// parentOf is pid's parent process id, 0 when pid is gone.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// runsSession reports whether pid runs `session ... --workspace-id id` (a
// zombie has no command line; a reused pid runs something else).
func runsSession(pid int, id string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	i := slices.Index(args, "--workspace-id")
	return len(args) > 1 && args[1] == "session" && i > 0 && i+1 < len(args) && args[i+1] == id
}
