package opencode

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/procgroup"
	"github.com/wharfhub/wharf/hub"
)

// runtime is one running `opencode serve`.
type runtime struct {
	d       *drv
	log     *slog.Logger
	cmd     *exec.Cmd
	client  *client
	version string

	done      chan struct{} // closed once the server is reaped
	life      context.Context
	end       context.CancelFunc // ends life: flows abandon their calls
	closed    atomic.Bool        // Close was called
	closeOnce sync.Once
	// killMu orders signals to the server's group with its reaping:
	// once reaped, its id may be another group's.
	killMu sync.Mutex
	reaped bool

	// instance orders the server's in-memory state: reads of it (status,
	// starting a login) hold it shared; disposing of it (so the next read
	// sees a change) holds it alone.
	instance sync.RWMutex

	mu    sync.Mutex
	flows map[*flow]struct{} // logins the server is waiting on
	stale bool               // a change awaits a dispose
	cat   *catalog           // the provider catalog, read once
}

// newRuntime watches the started cmd: once it exits, its group is killed
// and the runtime ends.
func newRuntime(d *drv, cmd *exec.Cmd) *runtime {
	life, end := context.WithCancel(context.Background())
	r := &runtime{d: d, log: d.log, cmd: cmd, done: make(chan struct{}), life: life, end: end, flows: map[*flow]struct{}{}}
	go func() {
		err := procgroup.Reap(cmd, func() {
			r.killMu.Lock()
			defer r.killMu.Unlock()
			_ = procgroup.Kill(cmd, syscall.SIGKILL) // what it left behind in its group
			r.reaped = true                          // from here on, its id may be reused
		})
		if !r.closed.Load() {
			r.log.Warn("login runtime exited on its own", "err", err)
		}
		r.end()
		close(r.done)
	}()
	return r
}

// ended reports whether the runtime ended or is ending.
func (r *runtime) ended() bool {
	select {
	case <-r.life.Done():
		return true
	default:
		return false
	}
}

// Done is closed once the server is gone.
func (r *runtime) Done() <-chan struct{} { return r.done }

// Close ends every flow, stops the server (SIGTERM to its group, SIGKILL
// after killGrace) and returns once it is reaped.
func (r *runtime) Close() {
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		r.end()
		r.kill(syscall.SIGTERM)
		t := time.NewTimer(killGrace)
		defer t.Stop()
		select {
		case <-r.done:
		case <-t.C:
			r.kill(syscall.SIGKILL)
		}
	})
	<-r.done
	if r.client != nil {
		r.client.http.CloseIdleConnections()
	}
}

// kill signals the server's process group, unless it was reaped.
func (r *runtime) kill(sig syscall.Signal) {
	r.killMu.Lock()
	defer r.killMu.Unlock()
	if r.reaped {
		return
	}
	if err := procgroup.Kill(r.cmd, sig); err != nil {
		r.log.Warn("could not signal the login runtime", "signal", sig.String(), "err", err)
	}
}

// msgStopped is the refusal of a call once the server is gone.
const msgStopped = "OpenCode's login server stopped."

// failed maps a failed exchange: the server gone, or not answering.
func (r *runtime) failed(err error, msg string) error {
	if r.ended() {
		return hub.Wrap(hub.Unavailable, err, msgStopped)
	}
	return unavailable(err, msg)
}

// changed records that the store changed: the server re-reads it once no
// login is pending (disposing of its state would drop the pending ones).
func (r *runtime) changed(ctx context.Context) {
	r.mu.Lock()
	r.stale = true
	r.mu.Unlock()
	r.refresh(ctx)
}

// refresh disposes of the server's cached state (its providers, as of
// the first request) when a change awaits it and no login is pending,
// as OpenCode's own clients do after a login. A failure is logged: the
// status then lags behind until the runtime restarts.
func (r *runtime) refresh(ctx context.Context) {
	r.instance.Lock()
	defer r.instance.Unlock()
	r.mu.Lock()
	due := r.stale && len(r.flows) == 0
	r.mu.Unlock()
	if !due {
		return
	}
	a, err := r.client.call(ctx, "POST", "/instance/dispose", nil, callTimeout)
	if err == nil && !a.ok() {
		err = statusError("/instance/dispose", a)
	}
	if err != nil {
		r.log.Warn("could not refresh the login runtime", "err", err)
		return
	}
	r.mu.Lock()
	r.stale = false
	r.mu.Unlock()
}

// catalog returns the provider catalog, read once per runtime: it is
// megabytes and changes only with OpenCode's configuration.
func (r *runtime) catalog(ctx context.Context) (*catalog, error) {
	r.mu.Lock()
	c := r.cat
	r.mu.Unlock()
	if c != nil {
		return c, nil
	}
	var got catalog
	err := r.client.stream(ctx, "GET", "/provider", nil, readTimeout, func(status int, body io.Reader) error {
		if status != 200 {
			return errors.New("GET /provider answered " + strconv.Itoa(status))
		}
		var err error
		got, err = parseCatalog(body, maxCatalog)
		return err
	})
	if err != nil {
		return nil, r.failed(err, "OpenCode's login server did not list its providers.")
	}
	r.mu.Lock()
	r.cat = &got
	r.mu.Unlock()
	return &got, nil
}
