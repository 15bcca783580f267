package ptyflow

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
)

// ErrOutputTooLong: a one-shot command printed more than its limit.
var ErrOutputTooLong = errors.New("the command printed more than expected")

// pipeGrace bounds the wait for a command's output once it has exited:
// a process that left its group could hold the pipe open.
const pipeGrace = 2 * time.Second

// Command is a program to run: its path, arguments (not the program's
// name), whole environment and working folder.
type Command struct {
	Path string
	Args []string
	Env  []string
	Dir  string
}

// cmd is c as an exec.Cmd.
func (c Command) cmd() *exec.Cmd {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	return cmd
}

// Run runs c to its end, leading a process group of its own, with no
// input, and returns its
// standard output (more than limit bytes is ErrOutputTooLong) and exit
// status. Its standard error is discarded: it can quote what the
// command was given. When ctx ends first the group is killed and ctx's
// error returned. Once Run returns, nothing of the group runs.
func Run(ctx context.Context, c Command, limit int) ([]byte, int, error) {
	cmd := c.cmd()
	out := &capped{limit: limit}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, out, nil
	cmd.WaitDelay = pipeGrace
	if err := procgroup.Start(cmd); err != nil {
		return nil, -1, err
	}
	var (
		mu   sync.Mutex
		gone bool // the leader was waited for: its pid may be anyone's
	)
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !gone {
			_ = procgroup.Kill(cmd, syscall.SIGKILL)
		}
	}
	stop := context.AfterFunc(ctx, kill)
	err := procgroup.Reap(cmd, func() {
		kill()
		mu.Lock()
		gone = true
		mu.Unlock()
	})
	stop()
	awaitGroupGone(cmd.Process.Pid, goneWithin)
	if ctx.Err() != nil {
		return nil, -1, ctx.Err()
	}
	if out.over {
		return nil, exitCode(cmd, err), ErrOutputTooLong
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return nil, -1, err
	}
	return out.buf, exitCode(cmd, err), nil
}

// capped keeps at most limit bytes written to it and notes more.
type capped struct {
	buf   []byte
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - len(c.buf); len(p) > room {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		c.over = true
	} else {
		c.buf = append(c.buf, p...)
	}
	return len(p), nil
}
