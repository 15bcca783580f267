package acp

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"github.com/wharfhub/wharf/hub/chat"
	"golang.org/x/sys/unix"
)

// Bounds of the agents' terminals.
const (
	// maxTerminals bounds the terminals held at once in a workspace,
	// across every agent of its Runtime: from terminal/create to
	// terminal/release or the end of the agent's connection.
	maxTerminals = 32
	// defaultOutputLimit is the output a terminal keeps when the agent
	// gives no outputByteLimit; maxOutputLimit bounds what it may ask
	// for, so a workspace keeps at most maxTerminals × 2 MiB = 64 MiB.
	defaultOutputLimit = 1 << 20
	maxOutputLimit     = 2 << 20
	// terminalWaitDelay is how long a terminal's output may stay open
	// after its command exited and its group was killed: a process that
	// left the group (setsid) may hold it.
	terminalWaitDelay = 2 * time.Second
)

// terminalSlots counts the terminals held in a workspace (one Runtime per
// workspace child). The zero value is ready.
type terminalSlots struct {
	mu sync.Mutex
	n  int
}

func (s *terminalSlots) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= maxTerminals {
		return false
	}
	s.n++
	return true
}

func (s *terminalSlots) give() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n--
}

// terminals are the commands a connection's agent runs through
// terminal/*: in the workspace (or a folder inside it, reached through
// the boundary), with the session's environment, each in its own process
// group that dies with the connection and with the workspace child
// (spawn). Each leaves a trace in its session's conversation (trace.go).
type terminals struct {
	c      *conn
	mu     sync.Mutex
	next   int
	byID   map[string]*terminal
	closed bool           // the connection ended: no new terminal
	reaps  sync.WaitGroup // the goroutines reaping commands, which report their end
}

type terminal struct {
	id    string
	trace terminalTrace
	cmd   *exec.Cmd
	view  chat.TerminalView // where people see it; nil when nobody can
	mu    sync.Mutex
	out   *output
	done  chan struct{}
	exit  acpsdk.TerminalExitStatus
	ended string // why Wharf killed it, if it did ("" otherwise)
	// exited is set once the command exited, before it is reaped: until
	// then its pid names its process group, which no other can take.
	exited bool
}

func newTerminals(c *conn) *terminals { return &terminals{c: c, byID: map[string]*terminal{}} }

var errNoTerminal = acpsdk.NewInvalidParams(map[string]any{"error": "unknown terminal"})

// Write keeps the output, dropping its beginning past the limit, and
// tees it to the view (which never blocks).
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out.Write(p)
	if t.view != nil {
		_, _ = t.view.Write(p)
	}
	return len(p), nil
}

func (ts *terminals) create(p acpsdk.CreateTerminalRequest) (string, error) {
	root := ts.c.boundary()
	rel := "."
	if p.Cwd != nil && *p.Cwd != "" {
		var err error
		if rel, err = root.Rel(*p.Cwd); err != nil {
			return "", refusal(err, "the working folder could not be used")
		}
	}
	dir, err := root.OpenDir(rel)
	if err != nil {
		return "", refusal(err, "the working folder could not be opened")
	}
	defer dir.Close() // the command has entered it once started
	limit := defaultOutputLimit
	if p.OutputByteLimit != nil && *p.OutputByteLimit > 0 {
		limit = min(*p.OutputByteLimit, maxOutputLimit)
	}
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Dir = dir.ChdirPath()
	cmd.Env = append([]string(nil), ts.c.r.opts.Env...)
	cmd.Env = append(cmd.Env, "PWD="+dir.Path())
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	// Once the command exits its group is killed (reap); a process that
	// left the group may still hold the output open, and Wait must not
	// wait for it.
	cmd.WaitDelay = terminalWaitDelay
	t := &terminal{cmd: cmd, out: newOutput(limit), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = t, t

	ts.mu.Lock()
	switch {
	case ts.closed:
		ts.mu.Unlock()
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "the agent's connection has ended"})
	case !ts.c.r.slots.take():
		ts.mu.Unlock()
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "the workspace already holds " +
			strconv.Itoa(maxTerminals) + " terminals; release one first"})
	}
	if w := ts.c.r.opts.Terminals; w != nil {
		// Before the command starts, so the view gets its first byte.
		argv, _ := boundArgv(append([]string{p.Command}, p.Args...))
		t.view = w.WatchTerminal(commandLine(argv)) // quoted as the trace shows it
	}
	if err := procgroup.Start(cmd); err != nil {
		if t.view != nil {
			t.view.Release()
		}
		ts.c.r.slots.give()
		ts.mu.Unlock()
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "the command could not be started"})
	}
	ts.next++
	t.id = "term-" + strconv.Itoa(ts.next)

	ts.byID[t.id] = t
	ts.reaps.Add(1)
	ts.mu.Unlock()

	t.trace = newTerminalTrace(string(p.SessionId), t.id, p, dir.Path())
	go ts.reap(t)
	return t.id, nil
}

// reap shows t in its conversation, waits for its command, kills what is
// left of its group (a background child holding the output), records its
// exit and reports it.
func (ts *terminals) reap(t *terminal) {
	defer ts.reaps.Done()
	ts.c.emit(t.trace.sid, t.trace.started())
	err := procgroup.Reap(t.cmd, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.exited = true
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	})
	t.mu.Lock()
	var ee *exec.ExitError
	switch {
	case err == nil || errors.Is(err, exec.ErrWaitDelay):
		code := 0
		t.exit.ExitCode = &code
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			sig := unix.SignalName(ws.Signal()) // SIGKILL, not "killed"
			if sig == "" {
				sig = ws.Signal().String()
			}
			t.exit.Signal = &sig
		} else {
			code := ee.ExitCode()
			t.exit.ExitCode = &code
		}
	}
	exit, ended := t.exit, t.ended
	tail, cut := t.out.Tail(traceTailBytes)
	if t.view != nil {
		t.view.Exited(exit.ExitCode)
	}
	t.mu.Unlock()
	close(t.done)
	ts.c.emit(t.trace.sid, t.trace.finished(exit, ended, tail, cut))
}

func (ts *terminals) get(id string) (*terminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.byID[id]
	if t == nil {
		return nil, errNoTerminal
	}
	return t, nil
}

func (ts *terminals) output(id string) (acpsdk.TerminalOutputResponse, error) {
	t, err := ts.get(id)
	if err != nil {
		return acpsdk.TerminalOutputResponse{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out, cut := t.out.Tail(t.out.Len())
	res := acpsdk.TerminalOutputResponse{Output: out, Truncated: cut}
	select {
	case <-t.done:
		exit := t.exit
		res.ExitStatus = &exit
	default:
	}
	return res, nil
}

func (ts *terminals) wait(ctx context.Context, id string) (acpsdk.WaitForTerminalExitResponse, error) {
	t, err := ts.get(id)
	if err != nil {
		return acpsdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return acpsdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return acpsdk.WaitForTerminalExitResponse{ExitCode: t.exit.ExitCode, Signal: t.exit.Signal}, nil
}

func (ts *terminals) kill(id string) error {
	t, err := ts.get(id)
	if err != nil {
		return err
	}
	t.kill("")
	return nil
}

// kill kills t's process group unless its command exited (the reaper
// killed the group then; once reaped, its id may name another group).
// why says why Wharf killed it, for the trace ("" when the agent asked).
func (t *terminal) kill(why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exited {
		return
	}
	if t.ended == "" {
		t.ended = why
	}
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
}

func (ts *terminals) release(id string) error {
	ts.mu.Lock()
	t := ts.byID[id]
	delete(ts.byID, id)
	ts.mu.Unlock()
	if t == nil {
		return errNoTerminal
	}
	t.kill("")
	t.unview()
	ts.c.r.slots.give()
	return nil
}

// unview takes t off the workspace's shells.
func (t *terminal) unview() {
	t.mu.Lock()
	v := t.view
	t.mu.Unlock()
	if v != nil {
		v.Release()
	}
}

// closeAll kills every terminal, the agent being gone, and returns once
// each command is reaped and its end reported: no update reaches the sink
// after the connection ends. Later calls find nothing to do.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	ts.closed = true
	held := ts.byID
	ts.byID = map[string]*terminal{}
	ts.mu.Unlock()
	for _, t := range held {
		t.kill("the agent's connection ended")
		t.unview()
		ts.c.r.slots.give()
	}
	ts.reaps.Wait()
}
