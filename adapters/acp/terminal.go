package acp

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
)

// defaultOutputLimit bounds a terminal's kept output when the agent gives
// no outputByteLimit; maxOutputLimit bounds what it may ask for.
const (
	defaultOutputLimit = 1 << 20
	maxOutputLimit     = 16 << 20
	maxTerminals       = 32
	// terminalWaitDelay is how long a terminal's output may stay open
	// after its command exited (a background child holds it).
	terminalWaitDelay = 2 * time.Second
)

// terminals are the commands a connection's agent runs through
// terminal/*: in the workspace (or a folder inside it, reached through
// the boundary), with the session's environment, each in its own process
// group.
type terminals struct {
	c    *conn
	mu   sync.Mutex
	next int
	byID map[string]*terminal
}

type terminal struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   []byte
	limit int
	cut   bool
	done  chan struct{}
	exit  acpsdk.TerminalExitStatus
}

func newTerminals(c *conn) *terminals { return &terminals{c: c, byID: map[string]*terminal{}} }

var errNoTerminal = acpsdk.NewInvalidParams(map[string]any{"error": "unknown terminal"})

// Write keeps the output, dropping its beginning past the limit at a
// character boundary, as ACP asks.
func (t *terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, p...)
	if over := len(t.out) - t.limit; over > 0 {
		for over < len(t.out) && !utf8.RuneStart(t.out[over]) {
			over++
		}
		t.out = append(t.out[:0], t.out[over:]...)
		t.cut = true
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A background child of the command keeps its output open: Wait must
	// not wait for it, so the command's exit is reported and the group
	// (that child too) killed.
	cmd.WaitDelay = terminalWaitDelay
	t := &terminal{cmd: cmd, limit: limit, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = t, t
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.byID) >= maxTerminals {
		return "", acpsdk.NewInternalError(map[string]any{"error": "too many terminals"})
	}
	if err := cmd.Start(); err != nil {
		return "", acpsdk.NewInvalidParams(map[string]any{"error": "the command could not be started"})
	}
	ts.next++
	id := "term-" + strconv.Itoa(ts.next)
	ts.byID[id] = t
	go func() {
		err := cmd.Wait()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.mu.Lock()
		var ee *exec.ExitError
		switch {
		case err == nil || errors.Is(err, exec.ErrWaitDelay):
			code := 0
			t.exit.ExitCode = &code
		case errors.As(err, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				sig := ws.Signal().String()
				t.exit.Signal = &sig
			} else {
				code := ee.ExitCode()
				t.exit.ExitCode = &code
			}
		}
		t.mu.Unlock()
		close(t.done)
	}()
	return id, nil
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
	res := acpsdk.TerminalOutputResponse{Output: string(t.out), Truncated: t.cut}
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
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	return nil
}

func (ts *terminals) release(id string) error {
	if err := ts.kill(id); err != nil {
		return err
	}
	ts.mu.Lock()
	delete(ts.byID, id)
	ts.mu.Unlock()
	return nil
}

// closeAll kills every terminal: the agent is gone.
func (ts *terminals) closeAll() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for id, t := range ts.byID {
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		delete(ts.byID, id)
	}
}
