// Package proc reads what the benchmarks measure of processes, from
// /proc: a process's parent and CPU time, its resident memory and peak,
// its open Sockets, and the machine's busy time.
package proc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stat is a process's parent and its CPU time in clock ticks: its
// own (user and system) and that of the children it waited for, from
// /proc/<pid>/stat.
func Stat(pid int) (ppid int, ticks int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	return ParseStat(b)
}

// ParseStat reads a /proc/<pid>/stat line: after the command, which may
// hold spaces and parentheses, field 4 is the parent and fields 14 to 17
// the user and system ticks, the process's and its waited-for children's.
func ParseStat(b []byte) (ppid int, ticks int64, err error) {
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if i < 0 || len(f) < 15 {
		return 0, 0, fmt.Errorf("unexpected stat line %.80q", b)
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, fmt.Errorf("unexpected stat line %.80q", b)
	}
	for _, s := range f[11:15] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("unexpected stat line %.80q", b)
		}
		ticks += n
	}
	return ppid, ticks, nil
}

// Processes is every process's parent and CPU time (Stat), by pid.
func Processes() map[int][2]int64 {
	all := map[int][2]int64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if ppid, ticks, err := Stat(pid); err == nil {
				all[pid] = [2]int64{int64(ppid), ticks}
			}
		}
	}
	return all
}

// Descendants are the processes under root, root aside, by their parents
// as /proc shows them now.
func Descendants(root int) []int { return Under(Processes(), root) }

func Under(all map[int][2]int64, root int) []int {
	var out []int
	for pid := range all {
		for p := int(all[pid][0]); p != 0; p = int(all[p][0]) {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// SessionChild is the `wharf session` child of the daemon daemon serving
// workspace ws (its command line holds --workspace-id ws), or 0.
func SessionChild(daemon int, ws string) int {
	for _, pid := range Descendants(daemon) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if ppid, _, _ := Stat(pid); ppid == daemon && bytes.Contains(b, []byte("\x00--workspace-id\x00"+ws+"\x00")) {
			return pid
		}
	}
	return 0
}

// VmRSS is a process's resident memory in bytes (its VmRSS field).
func VmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return ParseVmRSS(b)
}

func ParseVmRSS(status []byte) (int64, error) { return ParseStatusBytes(status, "VmRSS") }

// StatusBytes is a field of a process's /proc/<pid>/status given in
// kB (VmRSS, VmHWM: the peak), in bytes.
func StatusBytes(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return ParseStatusBytes(b, field)
}

func ParseStatusBytes(status []byte, field string) (int64, error) {
	_, v, ok := bytes.Cut(status, []byte("\n"+field+":"))
	line, _, _ := bytes.Cut(v, []byte("\n"))
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(line)), " kB"), 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("no %s in the status", field)
	}
	return kb << 10, nil
}

// Sockets counts a process's open socket descriptors.
func Sockets(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n, nil
}

// SteadySockets is the socket count once two readings 200 ms apart agree
// (at most 3 s of readings): a connection being closed is not counted.
func SteadySockets(pid int) (int, error) {
	last, err := Sockets(pid)
	for end := time.Now().Add(3 * time.Second); err == nil && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		var n int
		if n, err = Sockets(pid); n == last {
			break
		}
		last = n
	}
	return last, err
}

// CPUMeter measures, over a window, the share of the machine the other
// processes took: the CPU time of every process but this program and its
// descendants (the daemon, its children and agents), each process's own
// and its waited-for children's, so that a short-lived process counts
// once its parent has waited for it. A process that ended meanwhile
// brought its parent all its time, so the time it had at the start is
// taken off. This is the accounting a process's own figure uses:
// /proc/stat's sampled ticks disagree with it on a virtual machine.
type CPUMeter struct {
	start time.Time
	ticks map[int][2]int64
}

func StartCPU() *CPUMeter { return &CPUMeter{start: time.Now(), ticks: Processes()} }

// Others is the share of all CPUs the other processes took since start.
func (m *CPUMeter) Others() float64 {
	elapsed, now, sum := time.Since(m.start), Processes(), int64(0)
	ours := map[int]bool{os.Getpid(): true}
	for _, pid := range append(Under(now, os.Getpid()), Under(m.ticks, os.Getpid())...) {
		ours[pid] = true
	}
	for pid, p := range now {
		if d := p[1] - m.ticks[pid][1]; !ours[pid] && d > 0 {
			sum += d
		}
	}
	for pid, p := range m.ticks {
		if _, alive := now[pid]; !alive && !ours[pid] {
			sum -= p[1] // waited for meanwhile: its time before the window is in its parent's now
		}
	}
	return max(0, float64(sum)/100/(elapsed.Seconds()*float64(max(1, NumCPU()))))
}

// NumCPU counts the machine's CPUs from /proc/stat (the cpuN lines).
func NumCPU() int {
	b, _ := os.ReadFile("/proc/stat")
	n := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		if len(line) > 3 && line[:3] == "cpu" && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}

// KillLeft waits up to grace for the processes pids to end on their own
// (a daemon's children after it stopped), then kills those still there,
// calling left with each one's pid first. Benchmarks call it so nothing
// they started outlives them.
func KillLeft(pids []int, grace time.Duration, left func(pid int)) {
	for end := time.Now().Add(grace); len(pids) > 0; {
		var still []int
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				still = append(still, pid)
			}
		}
		if pids = still; len(pids) > 0 && !time.Now().Before(end) {
			for _, pid := range pids {
				left(pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
