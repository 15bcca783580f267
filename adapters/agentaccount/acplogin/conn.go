package acplogin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of the connection to the agent.
const (
	// MaxLine is the longest line read from the agent. What this
	// connection asks (initialize, logout) is answered in a few KiB; a
	// longer line ends the runtime rather than being held.
	MaxLine = 1 << 20
	// writeTimeout bounds one line written to the agent: one that does not
	// read its stdin ends the runtime.
	writeTimeout = 10 * time.Second
	// killGrace is how long a closed agent may take to exit after SIGTERM
	// before its group is killed.
	killGrace = 2 * time.Second
)

// conn is the running agent and its ACP connection.
type conn struct {
	name string
	log  *slog.Logger
	cmd  *exec.Cmd
	in   *lineWriter
	sdk  *acpsdk.ClientSideConnection
	done chan struct{} // closed once the agent is reaped and its output read out

	mu      sync.Mutex
	reaped  bool // the leader is about to be reaped: its group id may be reused
	closing bool
	noise   int // lines that were not JSON-RPC
}

// spawn starts the agent at path with args in env, its own process group,
// stdin and stdout wired to an ACP client connection, stderr discarded.
func spawn(name, path string, args, env []string, log *slog.Logger) (*conn, error) {
	cmd := exec.Command(path, args...)
	// A nil Env would hand the agent the Hub's own environment.
	cmd.Env = append(make([]string, 0, len(env)), env...)
	cmd.Dir = "/"
	if home := driver.Getenv(env, "HOME"); filepath.IsAbs(home) {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			cmd.Dir = home // where a person would run its login
		}
	}
	failed := func(err error) (*conn, error) {
		return nil, hub.Wrap(hub.Unavailable, err, name+" could not be started.")
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return failed(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return failed(err)
	}
	cmd.Stdin, cmd.Stdout = stdinR, stdoutW
	err = procgroup.Start(cmd)
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return failed(err)
	}
	c := &conn{name: name, log: log, cmd: cmd, in: &lineWriter{f: stdinW}, done: make(chan struct{})}
	toSDK, fromPump := io.Pipe()
	c.sdk = acpsdk.NewClientSideConnection(refuser{}, c.in, toSDK)
	c.sdk.SetLogger(slog.New(slog.DiscardHandler)) // it would log the agent's raw lines
	pumped := make(chan struct{})
	go func() {
		defer close(pumped)
		defer fromPump.Close()
		c.pump(stdoutR, fromPump)
	}()
	go c.wait(stdoutR, pumped)
	return c, nil
}

// wait reaps the agent, killing what is left of its group first, then
// reads out its output (bounded by killGrace: a descendant that left the
// group may hold the pipe) and closes done.
func (c *conn) wait(stdout *os.File, pumped <-chan struct{}) {
	err := procgroup.Reap(c.cmd, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if err := procgroup.Kill(c.cmd, syscall.SIGKILL); err != nil {
			c.log.Warn("could not kill the agent's process group", "agent", c.name, "err", err)
		}
		c.reaped = true
	})
	c.in.Close()
	select {
	case <-pumped:
	case <-time.After(killGrace):
	}
	stdout.Close()
	<-pumped
	c.mu.Lock()
	closing, noise := c.closing, c.noise
	c.mu.Unlock()
	if noise > 0 {
		c.log.Debug("the agent wrote lines that are not ACP; they were skipped", "agent", c.name, "lines", noise)
	}
	if !closing {
		c.log.Warn("the agent's login runtime exited", "agent", c.name, "err", err)
	}
	close(c.done)
}

// kill signals the agent's group, unless its leader is being reaped.
func (c *conn) kill(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return
	}
	if err := procgroup.Kill(c.cmd, sig); err != nil {
		c.log.Warn("could not signal the agent's process group", "agent", c.name, "err", err)
	}
}

// fail ends the runtime because the agent broke the connection's bounds.
func (c *conn) fail(why string) {
	c.log.Warn("the agent's login runtime ends", "agent", c.name, "why", why)
	c.kill(syscall.SIGKILL)
}

// ended reports whether the connection is gone or going: the agent exited,
// the SDK lost it, or Close was called.
func (c *conn) ended() bool {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	select {
	case <-c.done:
		return true
	case <-c.sdk.Done():
		return true
	default:
		return closing
	}
}

// Close ends the agent: SIGTERM to its group, SIGKILL after killGrace;
// it returns once the agent is reaped and its output read out.
// Idempotent.
func (c *conn) Close() {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.in.Close()
	c.kill(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(killGrace):
		c.kill(syscall.SIGKILL)
		<-c.done
	}
}

// pump reads the agent's stdout line by line until it ends: answers go to
// the SDK, requests are refused in line, notifications and lines that are
// not JSON-RPC are dropped. The agent waits while a line is handled, so
// nothing queues; a line longer than MaxLine ends the runtime.
func (c *conn) pump(stdout io.Reader, sdk io.Writer) {
	br := bufio.NewReaderSize(stdout, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLine {
			c.fail("it wrote a line longer than 1 MiB")
			return
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !c.dispatch(line, sdk) {
			return
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

// dispatch handles one line; false once the SDK's side is gone.
func (c *conn) dispatch(line []byte, sdk io.Writer) bool {
	kind, id := classify(line)
	switch kind {
	case lineResponse:
		_, err := sdk.Write(append(bytes.TrimSpace(line), '\n'))
		return err == nil
	case lineRequest:
		// This connection only logs in: no files, no terminals, no
		// permissions, nothing else either.
		b, _ := json.Marshal(struct {
			JSONRPC string               `json:"jsonrpc"`
			ID      json.RawMessage      `json:"id"`
			Error   *acpsdk.RequestError `json:"error"`
		}{"2.0", id, &acpsdk.RequestError{Code: -32601, Message: "Method not found"}})
		if _, err := c.in.Write(append(b, '\n')); err != nil && !c.ended() {
			c.fail("it does not read what it is sent")
		}
	case lineNoise:
		c.mu.Lock()
		c.noise++
		c.mu.Unlock()
	}
	return true
}

// The kinds of line the agent writes.
const (
	lineBlank        = iota
	lineNoise        // not a JSON-RPC message
	lineResponse     // an answer to a request of ours
	lineRequest      // a request to the client
	lineNotification // a notification, $/cancel_request included
)

// classify says what one line of the agent's is, and a request's id.
func classify(line []byte) (int, json.RawMessage) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return lineBlank, nil
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if line[0] != '{' || json.Unmarshal(line, &env) != nil {
		return lineNoise, nil
	}
	hasID := len(env.ID) > 0 && !bytes.Equal(env.ID, []byte("null"))
	switch {
	case env.Method != nil && *env.Method != "" && hasID:
		return lineRequest, env.ID
	case env.Method != nil && *env.Method != "":
		return lineNotification, nil
	case env.Method == nil && hasID:
		return lineResponse, nil
	}
	return lineNoise, nil
}

// lineWriter writes whole lines to the agent's stdin, from the SDK and
// the pump alike, one at a time, each within writeTimeout.
type lineWriter struct {
	mu     sync.Mutex
	f      *os.File
	closed atomic.Bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		return 0, io.ErrClosedPipe
	}
	if err := w.f.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return 0, err
	}
	return w.f.Write(p)
}

// Close closes stdin without waiting for a Write (one blocked on an agent
// that stopped reading holds mu; closing the pipe is what ends it).
func (w *lineWriter) Close() {
	if w.closed.CompareAndSwap(false, true) {
		w.f.Close()
	}
}
