package acp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// killGrace is how long a closed agent may take to exit after SIGTERM
// before its group is killed.
const killGrace = 2 * time.Second

// Bounds of what an agent's stderr may put in the logs.
const (
	maxStderrLine  = 256 // bytes logged of one line
	maxStderrLines = 100 // lines logged per agent; then one summary
)

// start spawns agent a (its resolved command at path) in dir, wires its
// pipes and initializes it within ctx.
func start(ctx context.Context, r *Runtime, a Agent, path, dir string, sink chat.AgentSink) (*conn, error) {
	cmd := exec.Command(path, a.Command[1:]...)
	cmd.Dir, cmd.Env = dir, r.agentEnv(a)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, a.Name+" could not be started")
	}
	// Our own pipes rather than StdoutPipe: Wait would close those as the
	// agent exits, losing what it wrote last (the chunk before a crash).
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, a.Name+" could not be started")
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		stdout.Close()
		stdoutW.Close()
		return nil, hub.Wrap(hub.Unavailable, err, a.Name+" could not be started")
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	err = procgroup.Start(cmd) // its own process group, which dies with the workspace child
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		stdout.Close()
		stderr.Close()
		stdin.Close()
		return nil, hub.Wrap(hub.Unavailable, err, a.Name+" could not be started")
	}
	c := newConn(r, a, dir, sink, cmd, stdin)
	toSDK, fromWire := io.Pipe()
	c.sdk = acpsdk.NewClientSideConnection(&client{c: c}, sdkWriter{c}, toSDK)
	c.sdk.SetLogger(slog.New(slog.DiscardHandler)) // it would log raw lines of the agent
	c.procs.Add(3)
	c.drained = make(chan struct{})
	go func() {
		defer stderr.Close()
		c.readStderr(stderr)
	}()
	go func() {
		defer close(c.drained)
		defer stdout.Close()
		c.read(stdout, fromWire)
	}()
	go c.wait()

	res, err := c.sdk.Initialize(ctx, acpsdk.InitializeRequest{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		ClientInfo:      &acpsdk.Implementation{Name: "wharf", Version: "1"},
		ClientCapabilities: acpsdk.ClientCapabilities{
			Fs:          acpsdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal:    true,
			Elicitation: &acpsdk.ElicitationCapabilities{Form: &acpsdk.ElicitationFormCapabilities{}},
		},
	})
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return nil, hub.Wrap(hub.Unavailable, ctx.Err(), a.Name+" did not answer in time")
		}
		return nil, c.failure(err, a.Name+" failed to start")
	}
	if err := c.authenticate(ctx, res.AuthMethods); err != nil {
		c.Close()
		return nil, err
	}
	c.info = chat.AgentInfo{Name: a.Name, LoadSession: res.AgentCapabilities.LoadSession,
		ListSessions: res.AgentCapabilities.SessionCapabilities.List != nil,
		Images:       res.AgentCapabilities.PromptCapabilities.Image}
	if res.AgentInfo != nil {
		c.info.Version = res.AgentInfo.Version
	}
	return c, nil
}

// wait reaps the agent, kills what is left of its group, and ends the
// connection with why it ended.
func (c *conn) wait() {
	defer c.procs.Done()
	err := procgroup.Reap(c.cmd, c.killGroup)
	// What the agent wrote before it went is read out first: the group is
	// dead, so EOF comes at once (the bound guards against an escapee).
	select {
	case <-c.drained:
	case <-time.After(killGrace):
	}
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		err = nil
	} else if err == nil {
		err = errors.New("the agent exited")
	} else {
		err = fmt.Errorf("the agent exited: %w", err)
	}
	c.end(err)
}

// killGroup kills the agent's process group: a node wrapper's native
// child goes with it.
func (c *conn) killGroup() {
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		c.log.Warn("could not kill the agent's process group", "err", err)
	}
}

// Close ends the agent: its pending requests are settled as cancelled,
// then SIGTERM to its group, SIGKILL after killGrace; it waits until the
// agent is reaped and its pipes are read out.
func (c *conn) Close() error {
	c.mu.Lock()
	c.closing = true
	pending := c.takePendingLocked()
	c.mu.Unlock()
	// Settled here, before Close returns, not by whichever of the ended
	// turn and the reaper gets to them first.
	c.cancelRequests(pending)
	c.out.Close()
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(killGrace):
		c.killGroup()
		<-c.done
	}
	c.terms.closeAll()
	c.procs.Wait()
	return nil
}

// readStderr logs the agent's stderr at debug level, bounded: the first
// maxStderrLines lines, each cut to maxStderrLine bytes, then a count.
func (c *conn) readStderr(r io.Reader) {
	defer c.procs.Done()
	br := bufio.NewReaderSize(r, 4096)
	lines, dropped := 0, 0
	midLine := false // the last piece read did not end its line
	for {
		piece, err := br.ReadSlice('\n')
		if len(piece) > 0 && !midLine {
			if lines < maxStderrLines {
				lines++
				c.log.Debug("agent stderr", "line", string(piece[:min(len(piece), maxStderrLine)]))
			} else {
				dropped++
			}
		}
		midLine = errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !midLine {
			break
		}
	}
	if dropped > 0 {
		c.log.Debug("agent stderr lines not logged", "lines", dropped)
	}
}

// lockedWriter writes whole lines to the agent's stdin, from the SDK and
// from the wire alike, one at a time.
type lockedWriter struct {
	mu     sync.Mutex // one line at a time
	w      io.WriteCloser
	closed atomic.Bool
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		return 0, io.ErrClosedPipe
	}
	return w.w.Write(p)
}

// Close closes stdin without waiting for a Write: one blocked on an agent
// that stopped reading holds mu, and closing the pipe is what ends it.
func (w *lockedWriter) Close() {
	if w.closed.CompareAndSwap(false, true) {
		w.w.Close()
	}
}
