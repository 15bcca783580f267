package browsertest

import (
	"context"
	"net"
	"os"
	"path/filepath"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub/service"
)

// InProcess is a Hub served by this process (daemon.Open) over the real
// adapters, except the workspace backend, which is fakes.Backend: its
// workspaces "run" without processes and report whatever activity the
// caller sets. The page cannot tell: it sees the same API and stream.
type InProcess struct {
	*Hub
	Backend *fakes.Backend
	close   func()
}

// StartInProcess serves a Hub with its state under dir on 127.0.0.1 and
// creates its first user, "ann".
func StartInProcess(ctx context.Context, dir string) (*InProcess, error) {
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		return nil, err
	}
	backend := fakes.NewBackend()
	d, err := daemon.Open(ctx, daemon.Config{StateDir: state, Adapt: func(p *service.Ports) { p.Backend = backend }})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.Close()
		return nil, err
	}
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(sctx, ln, nil) }()
	closeAll := func() { stop(); <-served; d.Close() }
	password, _, err := d.Hub().EnsureFirstUser(ctx, "ann")
	if err != nil {
		closeAll()
		return nil, err
	}
	h := &Hub{URL: "http://" + ln.Addr().String() + "/", User: "ann", Password: password, StateDir: state}
	return &InProcess{Hub: h, Backend: backend, close: closeAll}, nil
}

// Close shuts the Hub down.
func (p *InProcess) Close() { p.close() }
