package hostop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/hub"
)

// DefaultTimeout bounds an FS call, whose methods take no context.
const DefaultTimeout = 30 * time.Second

// Options configure a Client.
type Options struct {
	// Dial opens a stream to a server (`wharf hostop` on the host);
	// closing it ends the server. Required.
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
	// Lend runs the copied binary on the host with args, lent creds
	// (clone.go), and returns its stream and what it was lent, as
	// paths there. nil refuses Clone.
	Lend func(ctx context.Context, creds hub.SessionCredentials, args ...string) (LentStream, gitcmd.Lent, error)
	// Timeout bounds each FS call, and a dial. Default DefaultTimeout.
	Timeout time.Duration
	// Logger receives why a stream broke. Default: discard.
	Logger *slog.Logger
}

// Client is hub.FS and hub.GitRunner on another machine. It dials at the
// first call and again after the stream breaks; the calls in flight when
// it breaks fail (Unavailable). It is safe for concurrent use.
type Client struct {
	opts Options
	log  *slog.Logger

	dialMu sync.Mutex // serializes dials
	mu     sync.Mutex
	cur    *conn // nil until dialled, or after it broke
	nextID uint64
	closed bool
}

var (
	_ hub.FS        = (*Client)(nil)
	_ hub.GitRunner = (*Client)(nil)
)

// NewClient returns a Client; it dials nothing yet.
func NewClient(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{opts: opts, log: log}
}

// conn is one dialled stream and its calls in flight.
type conn struct {
	rwc     io.ReadWriteCloser
	writeMu sync.Mutex

	mu      sync.Mutex
	pending map[uint64]chan response
	err     error // why it broke; nil while it works
}

// errUnavailable is a call's error when the stream broke or could not be
// dialled.
func errUnavailable(err error) error {
	return hub.Wrap(hub.Unavailable, err, "the host could not be reached")
}

// Close ends the stream, if any; calls after Close fail.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	cur := c.cur
	c.cur = nil
	c.mu.Unlock()
	if cur != nil {
		cur.fail(errors.New("closed"))
	}
	return nil
}

// connection returns the working stream, dialling one when there is none.
func (c *Client) connection(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	cur, closed := c.cur, c.closed
	c.mu.Unlock()
	switch {
	case closed:
		return nil, hub.Errorf(hub.Unavailable, "the host's connection is closed")
	case cur != nil:
		return cur, nil
	}
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	c.mu.Lock()
	cur = c.cur
	c.mu.Unlock()
	if cur != nil {
		return cur, nil // another call dialled meanwhile
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	rwc, err := c.opts.Dial(ctx)
	if err != nil {
		if hub.MessageOf(err) != "" {
			return nil, err
		}
		return nil, errUnavailable(err)
	}
	cur, err = handshake(ctx, rwc)
	if err != nil {
		rwc.Close()
		return nil, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cur.fail(errors.New("closed"))
		return nil, hub.Errorf(hub.Unavailable, "the host's connection is closed")
	}
	c.cur = cur
	c.mu.Unlock()
	go c.read(cur)
	return cur, nil
}

// handshake exchanges hellos on rwc within ctx.
func handshake(ctx context.Context, rwc io.ReadWriteCloser) (*conn, error) {
	done := make(chan error, 1)
	go func() {
		if err := writeFrame(rwc, hello{Protocol: Protocol}); err != nil {
			done <- err
			return
		}
		var h hello
		if err := readHello(rwc, &h); err != nil {
			done <- err
			return
		}
		if h.Protocol != Protocol {
			done <- hub.Errorf(hub.Unavailable, "the host runs another build of Wharf (%q)", h.Protocol)
			return
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			if hub.MessageOf(err) != "" {
				return nil, err
			}
			return nil, errUnavailable(err)
		}
		return &conn{rwc: rwc, pending: map[uint64]chan response{}}, nil
	case <-ctx.Done():
		rwc.Close() // ends the goroutine's read
		return nil, errUnavailable(ctx.Err())
	}
}

// read hands each response to its call until the stream breaks; then it
// fails every call in flight and forgets the stream, so the next call
// dials again.
func (c *Client) read(cur *conn) {
	var err error
	for {
		var b []byte
		if b, err = readFrame(cur.rwc); err != nil {
			break
		}
		var resp response
		if err = decodeStrict(b, &resp); err != nil {
			break
		}
		cur.mu.Lock()
		ch := cur.pending[resp.ID]
		delete(cur.pending, resp.ID)
		cur.mu.Unlock()
		if ch != nil {
			ch <- resp // buffered: the call may have gone
		}
	}
	c.log.Warn("the connection to a host broke", "err", err)
	cur.fail(err)
	c.mu.Lock()
	if c.cur == cur {
		c.cur = nil
	}
	c.mu.Unlock()
}

// fail breaks cur: it closes the stream and fails every call in flight.
func (cur *conn) fail(err error) {
	cur.rwc.Close()
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if cur.err == nil {
		cur.err = err
	}
	for id, ch := range cur.pending {
		delete(cur.pending, id)
		close(ch)
	}
}

// call sends req and waits for its response within ctx.
func (c *Client) call(ctx context.Context, req request) (response, error) {
	cur, err := c.connection(ctx)
	if err != nil {
		return response{}, err
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	c.nextID++
	req.ID = c.nextID
	c.mu.Unlock()
	cur.mu.Lock()
	if cur.err != nil {
		err := cur.err
		cur.mu.Unlock()
		return response{}, errUnavailable(err)
	}
	cur.pending[req.ID] = ch
	cur.mu.Unlock()
	forget := func() {
		cur.mu.Lock()
		delete(cur.pending, req.ID)
		cur.mu.Unlock()
	}
	cur.writeMu.Lock()
	err = writeFrame(cur.rwc, req)
	cur.writeMu.Unlock()
	if err != nil {
		forget()
		cur.fail(err)
		return response{}, errUnavailable(err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			cur.mu.Lock()
			why := cur.err
			cur.mu.Unlock()
			return response{}, errUnavailable(why)
		}
		return resp, nil
	case <-ctx.Done():
		forget()
		return response{}, errUnavailable(fmt.Errorf("no answer: %w", ctx.Err()))
	}
}

// fsCall is call within the FS timeout; it returns the response's error
// as the error.
func (c *Client) fsCall(req request) (response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	resp, err := c.call(ctx, req)
	if err != nil {
		return resp, err
	}
	return resp, fromWire(resp.Err)
}

// Lstat describes path on the host.
func (c *Client) Lstat(path string) (fs.FileInfo, error) {
	resp, err := c.fsCall(request{Op: opLstat, Path: path})
	if err != nil {
		return nil, err
	}
	if resp.Info == nil {
		return nil, errUnavailable(errors.New("an answer without its info"))
	}
	return fileInfo{*resp.Info}, nil
}

// ReadDir lists the directory path on the host, sorted by name.
func (c *Client) ReadDir(path string) ([]fs.DirEntry, error) {
	resp, err := c.fsCall(request{Op: opReadDir, Path: path})
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(resp.Entries))
	for i, e := range resp.Entries {
		out[i] = fileInfo{e}
	}
	return out, nil
}

// Mkdir creates the directory path on the host, durably.
func (c *Client) Mkdir(path string) error {
	_, err := c.fsCall(request{Op: opMkdir, Path: path})
	return err
}

// RenameNoReplace renames oldpath to newpath on the host, never replacing.
func (c *Client) RenameNoReplace(oldpath, newpath string) error {
	_, err := c.fsCall(request{Op: opRename, Path: oldpath, To: newpath})
	return err
}

// RemoveEmpty removes the empty directory path on the host.
func (c *Client) RemoveEmpty(path string) error {
	_, err := c.fsCall(request{Op: opRemoveEmpty, Path: path})
	return err
}

// EvalSymlinks resolves path's links on the host.
func (c *Client) EvalSymlinks(path string) (string, error) {
	resp, err := c.fsCall(request{Op: opEvalSymlinks, Path: path})
	return resp.Path, err
}

// Home is the home of the user the host runs the server as.
func (c *Client) Home() (string, error) {
	resp, err := c.fsCall(request{Op: opHome})
	return resp.Path, err
}

// Inspect describes the checkout holding dir on the host.
func (c *Client) Inspect(ctx context.Context, dir string) (hub.Repository, error) {
	resp, err := c.call(ctx, request{Op: opInspect, Path: dir})
	if err != nil {
		return hub.Repository{}, err
	}
	if err := fromWire(resp.Err); err != nil {
		return hub.Repository{}, err
	}
	if resp.Repo == nil {
		return hub.Repository{}, errUnavailable(errors.New("an answer without its repository"))
	}
	return hub.Repository{TopLevel: resp.Repo.TopLevel, CommonDir: resp.Repo.CommonDir, Branch: resp.Repo.Branch}, nil
}

// Init creates an empty repository in dir on the host.
func (c *Client) Init(ctx context.Context, dir string) error {
	resp, err := c.call(ctx, request{Op: opInit, Path: dir})
	if err != nil {
		return err
	}
	return fromWire(resp.Err)
}
