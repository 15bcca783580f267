package hostop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// Git lent credentials on the host: a clone, and a fetch. A clone runs
// there in a terminal of its own, started by the very gitexec code the
// Hub runs at home (`wharf hostgit`), lent credentials that stay on the
// Hub: Options.Lend projects them on the
// Hub, copies the projection's files (paths and public halves only) to a
// private folder on the host, forwards its sockets back and runs the
// server with the projection's variables and settings as paths there
// (gitcmd.Lent). Each run has a stream of its own, not the operations'
// one: a clone's output is unbounded in time, and what is lent ends with
// the process. A fetch is one request and its answer on such a stream
// (fetch.go).
//
// The wire is the operations' frames. The client's first frame is the
// cloneRequest; each later one is input typed into git's terminal
// (lentFrame.In). The server answers that git started (Started) or why
// not (Done, Err), then with the terminal's output, chunk by chunk
// (Out), and last with how git ended (Done, Err). The end of the
// client's frames — a Kill, the Hub gone, the connection lost — kills
// git's group there, so a clone never outlives its stream: the server
// then answers how it ended, removes the folder the clone made, and
// exits.

// GitCommand is the argument Options.Lend runs the server with.
const GitCommand = "hostgit"

// The runs a lentRequest asks for.
const (
	runClone = "clone"
	runFetch = "fetch"
)

// LentGit is what the server runs: gitexec's.
type LentGit interface {
	CloneLent(ctx context.Context, url, target string, lent gitcmd.Lent) (hub.CloneRun, error)
	FetchLent(ctx context.Context, dir string, lent gitcmd.Lent) error
}

// cloneKillWait bounds how long Kill waits for the server to say the
// clone ended before it drops the stream: git's own grace, and the
// clean-up after it.
const cloneKillWait = 15 * time.Second

// lentRequest is the client's first frame.
type lentRequest struct {
	Protocol string      `json:"protocol"`
	Run      string      `json:"run"` // runClone or runFetch
	URL      string      `json:"url,omitempty"`
	Target   string      `json:"target,omitempty"`
	Dir      string      `json:"dir,omitempty"` // a fetch's repository
	Lent     gitcmd.Lent `json:"lent"`
}

// lentFrame is every later frame: input from the client; output, then
// the end, from the server.
type lentFrame struct {
	In      []byte     `json:"in,omitempty"`
	Started bool       `json:"started,omitempty"`
	Out     []byte     `json:"out,omitempty"`
	Done    bool       `json:"done,omitempty"`
	Err     *wireError `json:"err,omitempty"`
}

// LentStream is a process on the host lent credentials (Options.Lend):
// writes reach its stdin, reads come from its stdout. CloseWrite ends
// its stdin; Close ends it (after a grace), and what was lent with it.
type LentStream interface {
	io.ReadWriteCloser
	CloseWrite() error
}

// Clone starts git clone of req.URL into req.Target on the host, lent
// req.Credentials, per hub.GitRunner. Without Options.Lend it is refused.
func (c *Client) Clone(ctx context.Context, req hub.CloneRequest) (hub.CloneRun, error) {
	if c.opts.Lend == nil {
		return nil, errClone
	}
	s, lent, err := c.opts.Lend(ctx, req.Credentials, GitCommand)
	if err != nil {
		return nil, err
	}
	if err := writeFrame(s, lentRequest{Protocol: Protocol, Run: runClone, URL: req.URL, Target: req.Target, Lent: lent}); err != nil {
		s.Close()
		return nil, errUnavailable(err)
	}
	// The first frame says whether git started there.
	stop := context.AfterFunc(ctx, func() { s.Close() })
	b, err := readFrame(s)
	stop()
	var f lentFrame
	switch {
	case err == nil:
		err = decodeStrict(b, &f)
	case ctx.Err() != nil:
		s.Close()
		return nil, hub.Wrap(hub.Internal, ctx.Err(), "the clone was cancelled")
	}
	switch {
	case err != nil:
		s.Close()
		return nil, errUnavailable(err)
	case f.Done:
		s.Close()
		if f.Err == nil {
			return nil, hub.Errorf(hub.Internal, "the host ended the clone before it started")
		}
		return nil, fromWire(f.Err)
	case !f.Started:
		s.Close()
		return nil, hub.Errorf(hub.Internal, "the host answered the clone out of turn")
	}
	run := &remoteClone{s: s, done: make(chan struct{})}
	run.out.cond = sync.NewCond(&run.out.mu)
	go run.read()
	return run, nil
}

// remoteClone is a clone running on the host: hub.CloneRun.
type remoteClone struct {
	s    LentStream
	out  outBuffer
	done chan struct{} // closed once the end is known; err is set then
	err  error
	lost bool // the stream broke before the server said how git ended

	wmu      sync.Mutex // serializes frames written
	killOnce sync.Once
}

// read is the one reader of the stream: output into the buffer, then
// the end.
func (r *remoteClone) read() {
	defer close(r.done)
	defer r.s.Close()
	defer r.out.end()
	for {
		b, err := readFrame(r.s)
		if err != nil {
			r.err, r.lost = hub.Wrap(hub.Unavailable, err, "the connection to the host was lost during the clone"), true
			return
		}
		var f lentFrame
		if err := decodeStrict(b, &f); err != nil {
			r.err, r.lost = hub.Wrap(hub.Internal, err, "the host answered the clone with a malformed frame"), true
			return
		}
		if f.Done {
			r.err = fromWire(f.Err)
			return
		}
		r.out.write(f.Out)
	}
}

// maxBuffered bounds the terminal's output held for the reader: past it
// the stream is not read (git there waits, as on a terminal nobody
// reads), unless the clone is being killed, when what does not fit is
// dropped so that its end is read.
const maxBuffered = 1 << 20

// outBuffer is the terminal's output received and not yet read.
type outBuffer struct {
	mu       sync.Mutex
	cond     *sync.Cond
	buf      []byte
	ended    bool // nothing more will come
	dropping bool // killed: output that does not fit is dropped
}

func (o *outBuffer) write(p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.buf)+len(p) > maxBuffered && !o.dropping {
		o.cond.Wait()
	}
	if len(o.buf)+len(p) <= maxBuffered {
		o.buf = append(o.buf, p...)
		o.cond.Broadcast()
	}
}

func (o *outBuffer) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = true
	o.cond.Broadcast()
}

func (o *outBuffer) drop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dropping = true
	o.cond.Broadcast()
}

// Read reads the terminal's output; io.EOF once git has ended there and
// everything received was read.
func (r *remoteClone) Read(p []byte) (int, error) {
	o := &r.out
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.buf) == 0 && !o.ended {
		o.cond.Wait()
	}
	if len(o.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, o.buf)
	o.buf = o.buf[n:]
	o.cond.Broadcast()
	return n, nil
}

// Write types p into git's terminal on the host.
func (r *remoteClone) Write(p []byte) (int, error) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	select {
	case <-r.done:
		return 0, errors.New("the clone has ended")
	default:
	}
	if err := writeFrame(r.s, lentFrame{In: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Wait waits for the server's word on how git ended.
func (r *remoteClone) Wait() error {
	<-r.done
	return r.err
}

// Kill ends the client's frames, which kills git on the host, and waits
// for its end, up to cloneKillWait; then it drops the stream.
func (r *remoteClone) Kill() error {
	r.out.drop()
	r.killOnce.Do(func() {
		r.wmu.Lock()
		_ = r.s.CloseWrite()
		r.wmu.Unlock()
	})
	t := time.NewTimer(cloneKillWait)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		r.s.Close()
		<-r.done
	}
	return nil
}

// ServeLent is the server's side of one run lent credentials (`wharf
// hostgit`): it reads the request from r, runs it with git, and answers
// on w until git has ended. The end of r kills a clone's git. It returns
// once git has ended and the end was written (or could not be).
func ServeLent(ctx context.Context, r io.Reader, w io.Writer, git LentGit) error {
	b, err := readFrame(r)
	if err != nil {
		return err
	}
	var req lentRequest
	if err := decodeStrict(b, &req); err != nil {
		return fmt.Errorf("hostop: a malformed request: %w", err)
	}
	if req.Protocol != Protocol {
		return fmt.Errorf("hostop: the peer speaks %q, not %q: another build of Wharf", req.Protocol, Protocol)
	}
	switch req.Run {
	case runClone:
		return serveClone(ctx, r, w, git, req)
	case runFetch:
		return serveFetch(ctx, r, w, git, req)
	}
	return writeFrame(w, lentFrame{Done: true, Err: toWire(hub.Errorf(hub.Invalid, "unknown run %q", req.Run))})
}

// serveClone runs a clone and streams its terminal.
func serveClone(ctx context.Context, r io.Reader, w io.Writer, git LentGit, req lentRequest) error {
	run, err := git.CloneLent(ctx, req.URL, req.Target, req.Lent)
	if err != nil {
		return writeFrame(w, lentFrame{Done: true, Err: toWire(err)})
	}
	if err := writeFrame(w, lentFrame{Started: true}); err != nil {
		run.Kill()
		run.Wait()
		return err
	}
	// Input, until the client's frames end: then git is killed.
	go func() {
		defer run.Kill()
		for {
			b, err := readFrame(r)
			if err != nil {
				return
			}
			var f lentFrame
			if decodeStrict(b, &f) != nil {
				return
			}
			if _, err := run.Write(f.In); err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	broken := false
	for {
		n, err := run.Read(buf)
		if n > 0 && !broken {
			// A stream that broke still has its output read to git's
			// end, or git would block on a full terminal.
			broken = writeFrame(w, lentFrame{Out: buf[:n]}) != nil
		}
		if err != nil {
			break
		}
	}
	werr := run.Wait()
	if broken {
		return errors.New("hostop: the clone's stream broke")
	}
	return writeFrame(w, lentFrame{Done: true, Err: toWire(werr)})
}
