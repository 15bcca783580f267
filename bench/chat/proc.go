package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What this program reads of processes, from /proc: a process's parent
// and CPU time, its resident memory, its open sockets, and the machine's
// busy time.

// procStat is a process's parent and its CPU time in clock ticks: its
// own (user and system) and that of the children it waited for, from
// /proc/<pid>/stat.
func procStat(pid int) (ppid int, ticks int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStat(b)
}

// parseStat reads a /proc/<pid>/stat line: after the command, which may
// hold spaces and parentheses, field 4 is the parent and fields 14 to 17
// the user and system ticks, the process's and its waited-for children's.
func parseStat(b []byte) (ppid int, ticks int64, err error) {
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

// processes is every process's parent and CPU time (procStat), by pid.
func processes() map[int][2]int64 {
	all := map[int][2]int64{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if ppid, ticks, err := procStat(pid); err == nil {
				all[pid] = [2]int64{int64(ppid), ticks}
			}
		}
	}
	return all
}

// descendants are the processes under root, root aside, by their parents
// as /proc shows them now.
func descendants(root int) []int { return under(processes(), root) }

func under(all map[int][2]int64, root int) []int {
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

// sessionChild is the `wharf session` child of the daemon daemon serving
// workspace ws (its command line holds --workspace-id ws), or 0.
func sessionChild(daemon int, ws string) int {
	for _, pid := range descendants(daemon) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if ppid, _, _ := procStat(pid); ppid == daemon && bytes.Contains(b, []byte("\x00--workspace-id\x00"+ws+"\x00")) {
			return pid
		}
	}
	return 0
}

// vmRSS is a process's resident memory in bytes (VmRSS).
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(b)
}

func parseVmRSS(status []byte) (int64, error) { return parseStatusBytes(status, "VmRSS") }

// procStatusBytes is a field of a process's /proc/<pid>/status given in
// kB (VmRSS, VmHWM: the peak), in bytes.
func procStatusBytes(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseStatusBytes(b, field)
}

func parseStatusBytes(status []byte, field string) (int64, error) {
	_, v, ok := bytes.Cut(status, []byte("\n"+field+":"))
	line, _, _ := bytes.Cut(v, []byte("\n"))
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(line)), " kB"), 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("no %s in the status", field)
	}
	return kb << 10, nil
}

// sockets counts a process's open socket descriptors.
func sockets(pid int) (int, error) {
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

// steadySockets is the socket count once two readings 200 ms apart agree
// (at most 3 s of readings): a connection being closed is not counted.
func steadySockets(pid int) (int, error) {
	last, err := sockets(pid)
	for end := time.Now().Add(3 * time.Second); err == nil && time.Now().Before(end); {
		time.Sleep(200 * time.Millisecond)
		var n int
		if n, err = sockets(pid); n == last {
			break
		}
		last = n
	}
	return last, err
}

// cpuMeter measures, over a window, the share of the machine the other
// processes took: the CPU time of every process but this program and its
// descendants (the daemon, its children and agents), each process's own
// and its waited-for children's, so that a short-lived process counts
// once its parent has waited for it. A process that ended meanwhile
// brought its parent all its time, so the time it had at the start is
// taken off. This is the accounting a process's own figure uses:
// /proc/stat's sampled ticks disagree with it on a virtual machine.
type cpuMeter struct {
	start time.Time
	ticks map[int][2]int64
}

func startCPU() *cpuMeter { return &cpuMeter{start: time.Now(), ticks: processes()} }

// others is the share of all CPUs the other processes took since start.
func (m *cpuMeter) others() float64 {
	elapsed, now, sum := time.Since(m.start), processes(), int64(0)
	ours := map[int]bool{os.Getpid(): true}
	for _, pid := range append(under(now, os.Getpid()), under(m.ticks, os.Getpid())...) {
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
	return max(0, float64(sum)/100/(elapsed.Seconds()*float64(max(1, numCPU()))))
}

// numCPU counts the machine's CPUs from /proc/stat (the cpuN lines).
func numCPU() int {
	b, _ := os.ReadFile("/proc/stat")
	n := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		if len(line) > 3 && line[:3] == "cpu" && line[3] >= '0' && line[3] <= '9' {
			n++
		}
	}
	return n
}
