package acp

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

// spawn starts cmd as the leader of its own process group (so it is
// killed as a group) that the kernel kills when the workspace child
// dies, however it dies (SIGKILL included): the child cannot clean up
// then. The signal reaches the leader only; descendants that left its
// group, or that the leader left behind when it died, are not covered —
// every orderly end kills the whole group.
func spawn(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := make(chan error, 1)
	spawner() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// reap waits for cmd's process to exit, calls exited before reaping it
// (until it is reaped its pid, and so its process group's id, is nobody
// else's: exited may kill the group), then reaps it and returns what
// cmd.Wait returns.
func reap(cmd *exec.Cmd, exited func()) error {
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
