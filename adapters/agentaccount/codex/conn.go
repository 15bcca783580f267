package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of one app-server process.
const (
	// MaxLine is the longest line read from codex; a longer one is
	// skipped whole (an answer in it is then never seen: its call times
	// out).
	MaxLine = 1 << 20
	// CallTimeout bounds every call, initialize included, whatever the
	// caller's context allows; it covers codex's own 10 s bound on
	// reaching OpenAI when it reads a ChatGPT login.
	CallTimeout = 15 * time.Second
	// killGrace is how long a closed codex may take to exit after its
	// stdin closed and SIGTERM before its group is killed.
	killGrace = 2 * time.Second
	// answerTimeout bounds the refusal written to a request of codex's.
	answerTimeout = 5 * time.Second
)

// errStopped is the public error of a call codex will never answer.
var errStopped = &hub.Error{Kind: hub.Unavailable, Message: "Codex's login runtime stopped."}

// conn is one `codex app-server` process and the JSON-RPC calls on its
// stdio. Its process group is killed when it ends, however it ends.
type conn struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end; writes carry a deadline
	stdout *os.File // our end, closed by the reaper if a stray keeps it open
	stderr *os.File
	log    *slog.Logger
	notify func(method string, params json.RawMessage) // on the reader goroutine, in order
	ended  func()                                      // once the process is gone, before done closes

	wmu sync.Mutex // one line at a time

	mu      sync.Mutex
	nextID  int64
	calls   map[int64]chan message
	reaped  bool // the leader is about to be reaped: its group id may be reused
	stopped bool // no call is answered any more

	readerDone chan struct{}
	stderrDone chan struct{}
	done       chan struct{} // closed once the group is gone and the output read
}

// startConn starts path (with args) in its own process group, with env,
// in the root directory (codex reads project settings from its working
// directory; the root has none).
func startConn(path string, args, env []string, log *slog.Logger,
	notify func(string, json.RawMessage), ended func()) (*conn, error) {
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Dir = env, "/"
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "Codex could not be started.")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, hub.Wrap(hub.Unavailable, err, "Codex could not be started.")
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, hub.Wrap(hub.Unavailable, err, "Codex could not be started.")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	err = procgroup.Start(cmd)
	closeAll(inR, outW, errW) // the child's ends
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, hub.Wrap(hub.Unavailable, err, "Codex could not be started.")
	}
	c := &conn{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, log: log, notify: notify, ended: ended,
		calls: map[int64]chan message{}, readerDone: make(chan struct{}), stderrDone: make(chan struct{}),
		done: make(chan struct{})}
	go c.read()
	go c.drainStderr()
	go c.wait()
	return c, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// call sends method with params and returns codex's result, within ctx
// and CallTimeout. Codex's error answer is a *rpcFailure; no answer (a
// stopped codex, a deadline) is Unavailable.
func (c *conn) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, errStopped
	}
	c.nextID++
	id := c.nextID
	ch := make(chan message, 1)
	c.calls[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
	}()
	line, err := json.Marshal(struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{id, method, params})
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "The request to Codex could not be encoded.")
	}
	if err := c.write(ctx, line); err != nil {
		return nil, err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, errStopped
		}
		if m.err != nil {
			return nil, m.err
		}
		return m.result, nil
	case <-ctx.Done():
		c.log.Warn("codex did not answer in time", "method", method)
		return nil, &hub.Error{Kind: hub.Unavailable, Message: "Codex did not answer in time.", Err: ctx.Err()}
	}
}

// notifyCodex sends a notification (no answer).
func (c *conn) notifyCodex(ctx context.Context, method string) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	line, _ := json.Marshal(struct {
		Method string `json:"method"`
	}{method})
	return c.write(ctx, line)
}

// write writes one line to codex's stdin before ctx's deadline: a codex
// that stops reading cannot hold a caller.
func (c *conn) write(ctx context.Context, line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if d, ok := ctx.Deadline(); ok {
		_ = c.stdin.SetWriteDeadline(d)
	}
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		return &hub.Error{Kind: hub.Unavailable, Message: "Codex is not reading its requests.", Err: err}
	}
	return nil
}

// read reads codex's stdout line by line until it ends, delivering
// answers to their calls and notifications to notify. A line over
// MaxLine is skipped whole; one that does not parse is skipped.
func (c *conn) read() {
	defer close(c.readerDone)
	br := bufio.NewReaderSize(c.stdout, 64<<10)
	var line []byte
	skipping := false
	garbled := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if !skipping && len(chunk) > 0 {
			if len(line)+len(chunk) > MaxLine {
				skipping, line = true, nil
				c.log.Warn("codex wrote a line longer than the bound; it is skipped", "bound", MaxLine)
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !skipping && len(bytesTrim(line)) > 0 && !c.dispatch(line) {
			garbled++
		}
		skipping, line = false, line[:0]
		if err != nil {
			break
		}
	}
	if garbled > 0 {
		c.log.Warn("codex wrote lines that did not parse; they were skipped", "lines", garbled)
	}
}

// bytesTrim is line without its line end and surrounding blanks.
func bytesTrim(line []byte) []byte {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r' || line[len(line)-1] == ' ') {
		line = line[:len(line)-1]
	}
	return line
}

// dispatch handles one line; false when it did not parse.
func (c *conn) dispatch(line []byte) bool {
	m, err := parseMessage(line)
	if err != nil {
		return false
	}
	switch {
	case m.isResponse():
		c.mu.Lock()
		ch := c.calls[m.id]
		delete(c.calls, m.id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case m.isRequest():
		// Codex asks its client only about threads and external tokens,
		// neither of which this client has: it says so, so codex does
		// not wait.
		c.log.Debug("codex asked something Wharf does not answer", "method", m.method)
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		refusal, _ := json.Marshal(struct {
			ID    json.RawMessage `json:"id"`
			Error any             `json:"error"`
		}{m.rawID, map[string]any{"code": -32601, "message": "not supported by this client"}})
		_ = c.write(ctx, refusal)
		cancel()
	default:
		c.notify(m.method, m.params)
	}
	return true
}

// drainStderr reads codex's stderr to its end and drops it: it is
// codex's raw output, which may repeat what it was given.
func (c *conn) drainStderr() {
	defer close(c.stderrDone)
	n, _ := io.Copy(io.Discard, c.stderr)
	if n > 0 {
		c.log.Debug("codex wrote to stderr (not logged)", "bytes", n)
	}
}

// wait reaps codex, kills what is left of its group, reads out its
// output (bounded: a stray that left the group cannot hold it), fails
// the calls still waiting, and closes done.
func (c *conn) wait() {
	err := procgroup.Reap(c.cmd, func() {
		c.mu.Lock()
		c.reaped = true
		c.mu.Unlock()
		_ = procgroup.Kill(c.cmd, syscall.SIGKILL)
	})
	timer := time.NewTimer(killGrace)
	defer timer.Stop()
	for _, ch := range []chan struct{}{c.readerDone, c.stderrDone} {
		select {
		case <-ch:
		case <-timer.C:
			closeAll(c.stdout, c.stderr)
			<-ch
		}
	}
	closeAll(c.stdout, c.stderr, c.stdin)
	c.mu.Lock()
	stopped := c.stopped
	c.stopped = true
	for id, ch := range c.calls {
		close(ch)
		delete(c.calls, id)
	}
	c.mu.Unlock()
	if !stopped {
		c.log.Warn("codex's login runtime exited on its own", "err", err)
	}
	c.ended()
	close(c.done)
}

// close ends codex: stdin closed (it exits at end of input), SIGTERM to
// its group, SIGKILL after killGrace; it returns once done is closed.
func (c *conn) close() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	_ = c.stdin.Close()
	c.signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(killGrace):
		c.signal(syscall.SIGKILL)
		<-c.done
	}
}

// signal sends sig to codex's group while its leader is not reaped (its
// id cannot be another group's then).
func (c *conn) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.reaped {
		if err := procgroup.Kill(c.cmd, sig); err != nil {
			c.log.Warn("could not signal codex's process group", "err", err)
		}
	}
}
