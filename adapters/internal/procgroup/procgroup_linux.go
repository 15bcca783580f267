package procgroup

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// spawnRequest is a command for the spawning thread to start.
type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner is the thread that starts agents and terminals. The kernel
// sends a process its parent-death signal when the *thread* that forked
// it exits (go.dev/issue/27505), and the Go runtime ends a thread whose
// goroutine exits locked to it; this goroutine locks its thread and
// never returns, so the signal comes only when the workspace child dies.
var spawner = sync.OnceValue(func() chan<- spawnRequest {
	ch := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread()
		for req := range ch {
			req.done <- req.cmd.Start()
		}
	}()
	return ch
})

// Start starts cmd as the leader of its own process group (so it is
// killed as a group) that the kernel kills when the process that started
// it (the workspace child, the Hub) dies, however it dies (SIGKILL
// included): that process cannot clean up then. The signal reaches the leader only; descendants that left its
// group, or that the leader left behind when it died, are not covered —
// every orderly end kills the whole group.
func Start(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return start(cmd)
}

// StartInTerminal starts cmd as Start does, but leading a new session
// whose controlling terminal is its stdin (a PTY's follower): a program
// that reads a code from "the terminal" reads it there, and the whole
// session is its group.
func StartInTerminal(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Pdeathsig: syscall.SIGKILL}
	return start(cmd)
}

// start starts cmd on the spawner thread.
func start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawner() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// Reap waits for cmd's process to exit, calls exited before reaping it
// (until it is reaped its pid, and so its process group's id, is nobody
// else's: exited may kill the group), then reaps it and returns what
// cmd.Wait returns.
func Reap(cmd *exec.Cmd, exited func()) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			break
		}
	}
	exited()
	return cmd.Wait()
}
