package credtools

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// maxOutput bounds what a probe may print on each of stdout and stderr.
const maxOutput = 8 << 10

// outcome is what one probe's process did.
type outcome struct {
	started bool
	// exit is the exit status, or -1 when a signal ended the process.
	exit           int
	stdout, stderr []byte
	// Why the probe was stopped, if it was: the bound passed, ctx ended
	// (ctxErr), a stream passed maxOutput, or the output stayed open
	// WaitDelay after the process group was killed (a process that left
	// the group held it).
	timedOut, overflow, heldOpen bool
	ctxErr                       error
}

// run runs exe with the single argument arg and waits for it, bounded:
//   - its environment is PATH (the Hub's), LANG=C and LC_ALL=C; its
//     working folder is "/" and its stdin the null device;
//   - it leads its own process group, which is killed (SIGKILL) when the
//     leader exits, when p.timeout passes, when a stream passes
//     maxOutput, or when ctx ends: nothing it started outlives it but a
//     process that left the group (setsid);
//   - once the group is dead its output pipes are read at most
//     p.waitDelay more, then closed.
func (p *Prober) run(ctx context.Context, exe, arg string) outcome {
	var o outcome
	if o.ctxErr = ctx.Err(); o.ctxErr != nil {
		return o
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return o
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return o
	}
	defer errR.Close()

	cmd := exec.Command(exe, arg)
	cmd.Env = []string{"PATH=" + p.path, "LANG=C", "LC_ALL=C"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = outW, errW // files: no copying goroutines in exec
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	outW.Close() // the child holds its own copies
	errW.Close()
	if err != nil {
		return o
	}
	o.started = true
	group := &group{pid: cmd.Process.Pid}

	stdout, stderr := &capped{}, &capped{}
	overflow := make(chan struct{})
	var overOnce sync.Once
	over := func() { overOnce.Do(func() { close(overflow) }) }
	stdout.over, stderr.over = over, over
	drained := make(chan struct{}, 2)
	for _, d := range []struct {
		w *capped
		r *os.File
	}{{stdout, outR}, {stderr, errR}} {
		go func() {
			_, _ = io.Copy(d.w, d.r) // ends at EOF, or when the read end is closed
			drained <- struct{}{}
		}()
	}

	exited := make(chan error, 1)
	go func() { exited <- reap(cmd, group.killLast) }()
	bound := time.NewTimer(p.timeout)
	defer bound.Stop()
	select {
	case err = <-exited:
	case <-bound.C:
		o.timedOut = true
	case <-overflow:
		o.overflow = true
	case <-ctx.Done():
		o.ctxErr = ctx.Err()
	}
	if o.timedOut || o.overflow || o.ctxErr != nil {
		group.kill()
		err = <-exited // SIGKILL ends it
	}

	hold := time.NewTimer(p.waitDelay)
	defer hold.Stop()
	for n := 0; n < 2; {
		select {
		case <-drained:
			n++
		case <-hold.C:
			o.heldOpen = true
			outR.Close() // ends the reads; drained follows
			errR.Close()
		}
	}

	var exit *exec.ExitError
	switch {
	case err == nil:
		o.exit = 0
	case errors.As(err, &exit) && exit.Exited():
		o.exit = exit.ExitCode()
	default: // a signal ended it
		o.exit = -1
	}
	o.stdout, o.stderr = stdout.buf, stderr.buf
	o.overflow = o.overflow || stdout.total > maxOutput || stderr.total > maxOutput
	return o
}

// group is a probe's process group, led by pid.
type group struct {
	mu     sync.Mutex
	pid    int
	reaped bool
}

// kill kills the group unless its leader was reaped: until then the
// leader's pid, and so the group's id, is nobody else's.
func (g *group) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		killGroup(g.pid)
	}
}

// killLast kills the group once its leader exited, just before the
// leader is reaped, so that nothing the probe started outlives it.
func (g *group) killLast() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.reaped {
		killGroup(g.pid)
		g.reaped = true
	}
}

// killGroup sends SIGKILL to the process group pid; a group already gone
// is no error.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// capped keeps the first maxOutput bytes written to it and counts all of
// them, calling over once they pass maxOutput. Writes always succeed, so
// the pipe keeps draining until the process is killed.
type capped struct {
	buf   []byte
	total int
	over  func()
}

// Write keeps what fits and reports every byte as written.
func (c *capped) Write(b []byte) (int, error) {
	c.total += len(b)
	if room := maxOutput - len(c.buf); room > 0 {
		c.buf = append(c.buf, b[:min(room, len(b))]...)
	}
	if c.total > maxOutput {
		c.over()
	}
	return len(b), nil
}
