package hostop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// maxInFlight bounds the requests a server runs at once; more wait to be
// read, so a flood of calls holds no more than this many goroutines.
const maxInFlight = 8

// gitTimeout bounds one git operation on the server, whatever the client
// does (the client stops waiting at its own deadline; the server's work
// ends here).
const gitTimeout = 2 * time.Minute

// Serve answers the requests read from r on w, with fsys and git, until r
// ends (nil), ctx ends, or the stream breaks. It first reads the client's
// hello and answers with its own; a client of another protocol is refused
// (an error, after telling it). Requests run concurrently, at most
// maxInFlight at once; answers are written as they finish.
func Serve(ctx context.Context, r io.Reader, w io.Writer, fsys hub.FS, git hub.GitRunner) error {
	var h hello
	if err := readHello(r, &h); err != nil {
		return err
	}
	if err := writeFrame(w, hello{Protocol: Protocol}); err != nil {
		return err
	}
	if h.Protocol != Protocol {
		return fmt.Errorf("hostop: the peer speaks %q, not %q: another build of Wharf", h.Protocol, Protocol)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{fs: fsys, git: git, w: w, slots: make(chan struct{}, maxInFlight)}
	defer s.wg.Wait()
	frames := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		for {
			b, err := readFrame(r)
			if err != nil {
				readErr <- err
				return
			}
			select {
			case frames <- b:
			case <-ctx.Done():
				readErr <- ctx.Err()
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case b := <-frames:
			var req request
			if err := decodeStrict(b, &req); err != nil {
				return fmt.Errorf("hostop: a malformed request: %w", err)
			}
			select {
			case s.slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer func() { <-s.slots }()
				s.answer(ctx, req)
			}()
		}
	}
}

type server struct {
	fs    hub.FS
	git   hub.GitRunner
	slots chan struct{}
	wg    sync.WaitGroup

	mu sync.Mutex // serializes writes to w
	w  io.Writer
}

// answer runs req and writes its response; a response that cannot be
// written is dropped (the stream is broken and Serve ends on its read).
func (s *server) answer(ctx context.Context, req request) {
	resp := s.run(ctx, req)
	resp.ID = req.ID
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := writeFrame(s.w, resp); errors.Is(err, errFrameTooLarge) {
		writeFrame(s.w, response{ID: req.ID, Err: toWire(hub.Errorf(hub.TooLarge, "the answer is too large to send"))})
	}
}

func (s *server) run(ctx context.Context, req request) response {
	switch req.Op {
	case opLstat:
		fi, err := s.fs.Lstat(req.Path)
		if err != nil {
			return response{Err: toWire(err)}
		}
		info := toInfo(fi)
		return response{Info: &info}
	case opReadDir:
		des, err := s.fs.ReadDir(req.Path)
		if err != nil {
			return response{Err: toWire(err)}
		}
		if len(des) > MaxEntries {
			return response{Err: toWire(hub.Errorf(hub.TooLarge, "the folder holds more than %d entries", MaxEntries))}
		}
		out := make([]wireInfo, 0, len(des))
		for _, de := range des {
			fi, err := de.Info()
			if err != nil {
				continue // gone since it was listed
			}
			out = append(out, toInfo(fi))
		}
		return response{Entries: out}
	case opMkdir:
		return response{Err: toWire(s.fs.Mkdir(req.Path))}
	case opRename:
		return response{Err: toWire(s.fs.RenameNoReplace(req.Path, req.To))}
	case opRemoveEmpty:
		return response{Err: toWire(s.fs.RemoveEmpty(req.Path))}
	case opEvalSymlinks:
		p, err := s.fs.EvalSymlinks(req.Path)
		return response{Path: p, Err: toWire(err)}
	case opHome:
		p, err := s.fs.Home()
		return response{Path: p, Err: toWire(err)}
	case opInspect, opInit:
		if s.git == nil {
			return response{Err: toWire(errNoGit)}
		}
	}
	switch req.Op {
	case opInspect:
		ctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		repo, err := s.git.Inspect(ctx, req.Path)
		if err != nil {
			return response{Err: toWire(err)}
		}
		return response{Repo: &wireRepo{TopLevel: repo.TopLevel, CommonDir: repo.CommonDir, Branch: repo.Branch}}
	case opInit:
		ctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		return response{Err: toWire(s.git.Init(ctx, req.Path))}
	}
	if run, ok := worktreeOps[req.Op]; ok {
		ctx, cancel := context.WithTimeout(ctx, gitTimeout)
		defer cancel()
		return s.worktree(ctx, req, run)
	}
	return response{Err: toWire(hub.Errorf(hub.Invalid, "unknown operation %q", req.Op))}
}
