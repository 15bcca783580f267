package childrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub"
)

var _ hub.WorkspaceSession = (*Session)(nil)

// Process is the backend's handle on a started child. Both methods may be
// called more than once, concurrently, and after the child has ended
// (they are no-ops then: a backend never signals a pid that may have been
// reused).
type Process interface {
	// Terminate asks the child to end in order: SIGTERM to its group, or
	// the end of its stdin (which the child takes as the Hub being gone).
	Terminate()
	// Kill ends the child and everything it started, at once.
	Kill()
}

// Config says what a Session reaches and how it ends.
type Config struct {
	WorkspaceID string
	// Socket is a Unix socket on the Hub's machine whose every connection
	// reaches the child's internal endpoint.
	Socket  string
	Process Process
	// Terminate names what Process.Terminate does, for the log entry of a
	// child that ignored it ("SIGTERM").
	Terminate string
	// ReadyTimeout bounds AwaitReady; StopGrace each of Stop's two waits.
	ReadyTimeout, StopGrace time.Duration
	// KillWait, when longer than StopGrace, bounds the wait for the end
	// after a kill instead: a backend whose kill and clean-up are round
	// trips to another machine (sshhost) needs their time on top.
	KillWait time.Duration
	Log      *slog.Logger
}

// Session is one child: a hub.WorkspaceSession. The backend that made it
// (New) runs ReadStdout and ReadStderr, calls AwaitReady (and Abort when
// that fails), and calls Finish once the child is gone and cleaned up.
type Session struct {
	cfg     Config
	log     *slog.Logger
	ready   chan error    // the first stdout line: nil for the readiness line
	outDone chan struct{} // closed when stdout is fully read
	errDone chan struct{} // closed when stderr is fully read
	tail    tail          // the end of stderr, for logs
	client  *http.Client  // facts and feed requests over the socket
	feeds   feedSource

	mu       sync.Mutex
	stopping bool // the end was asked for (Stop, or a failed start)

	// exitErr and status are set by Finish before done is closed.
	exitErr error
	status  string
	done    chan struct{}
}

// New returns the Session of a started child; log is the backend's logger
// for this child.
func New(cfg Config) *Session {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Session{
		cfg: cfg, log: cfg.Log,
		ready: make(chan error, 1), outDone: make(chan struct{}), errDone: make(chan struct{}),
		done: make(chan struct{}),
	}
	s.client = &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return s.Dial(ctx) },
			// One fresh connection per call: facts are asked rarely, a feed
			// holds its connection for its life, and no idle connection then
			// outlives the session or holds a descriptor.
			DisableKeepAlives:      true,
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	s.feeds = feedSource{client: s.client, done: s.done, maxEvent: childproto.MaxEventBytes}
	return s
}

// WorkspaceID is the workspace whose session this is.
func (s *Session) WorkspaceID() string { return s.cfg.WorkspaceID }

// Socket is the Unix socket that reaches the child.
func (s *Session) Socket() string { return s.cfg.Socket }

// Facts asks the child over its socket; the deadline is ctx's.
func (s *Session) Facts(ctx context.Context) (hub.WorkspaceSessionFacts, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://session"+childproto.FactsPath, nil)
	if err != nil {
		return hub.WorkspaceSessionFacts{}, hub.Wrap(hub.Internal, err, "session facts request")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return hub.WorkspaceSessionFacts{}, hub.Wrap(hub.Unavailable, err, "session did not answer")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return hub.WorkspaceSessionFacts{}, hub.Wrap(hub.Unavailable,
			fmt.Errorf("facts: status %s", resp.Status), "session did not answer")
	}
	body, err := childproto.ReadFacts(resp.Body)
	if err != nil {
		return hub.WorkspaceSessionFacts{}, hub.Wrap(hub.Unavailable, err, "session did not answer")
	}
	f := hub.WorkspaceSessionFacts{WorkspaceAPIRevision: body.WorkspaceAPIRevision, Shells: make([]hub.Shell, 0, len(body.Shells))}
	for _, sh := range body.Shells {
		f.Shells = append(f.Shells, hub.Shell{Attached: sh.Attached, Label: sh.Label})
	}
	return f, nil
}

// Dial connects to the child's socket. An ended session refuses at once.
func (s *Session) Dial(ctx context.Context) (net.Conn, error) {
	select {
	case <-s.done:
		return nil, hub.Errorf(hub.Unavailable, "session has ended")
	default:
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", s.cfg.Socket)
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "session unreachable")
	}
	return c, nil
}

// Done is closed once the backend has called Finish: the child is gone
// and cleaned up after.
func (s *Session) Done() <-chan struct{} { return s.done }

// Stop asks the child to end (Process.Terminate), waits up to StopGrace
// (cut short when ctx ends), then kills it (Process.Kill) and waits up to
// StopGrace (or KillWait) more for the end; that last wait ignores ctx, since a kill
// normally lands at once and giving up early would only leave the end
// unconfirmed. Concurrent and repeated calls are safe; on an ended
// session Stop is a no-op.
func (s *Session) Stop(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	grace := s.cfg.StopGrace
	s.markStopping()
	s.cfg.Process.Terminate()
	polite := time.NewTimer(grace)
	defer polite.Stop()
	select {
	case <-s.done:
		return nil
	case <-polite.C:
		s.log.Warn("session ignored "+s.cfg.Terminate+"; killing it", "grace", grace)
	case <-ctx.Done():
		s.log.Warn("session stop cut short; killing it", "err", ctx.Err())
	}
	s.cfg.Process.Kill()
	forced := time.NewTimer(max(grace, s.cfg.KillWait))
	defer forced.Stop()
	select {
	case <-s.done:
		return nil
	case <-forced.C:
		s.log.Error("session exit could not be confirmed after it was killed")
		return hub.Wrap(hub.Internal, errors.New("no exit after the kill"),
			"session exit could not be confirmed after termination")
	}
}

// markStopping records that the end was asked for.
func (s *Session) markStopping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
}

// Stopping reports whether the end was asked for (Stop, Abort).
func (s *Session) Stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopping
}

// OpenFeed opens the feed over the session's socket: a GET of the child's
// feed endpoint, read as Server-Sent Events (see feedSource and stream).
func (s *Session) OpenFeed(ctx context.Context, req hub.FeedRequest) (hub.Feed, error) {
	return s.feeds.open(ctx, req)
}

// AgentLoginChanged POSTs the change to the child (childproto.AgentLogin)
// over its socket and returns once the child answered 204, within ctx. An
// id no agent can have (childproto.ValidAgentID: the child refuses such
// agents at its start) is no agent of the session: nil, without asking.
func (s *Session) AgentLoginChanged(ctx context.Context, agent string) error {
	body, err := childproto.EncodeAgentLogin(childproto.AgentLogin{Agent: agent})
	if err != nil {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://session"+childproto.AgentLoginPath, bytes.NewReader(body))
	if err != nil {
		return hub.Wrap(hub.Internal, err, "agent login request")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return hub.Wrap(hub.Unavailable, err, "the session did not take the agent's login change")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return hub.Wrap(hub.Unavailable, fmt.Errorf("agent login: status %s", resp.Status),
			"the session did not take the agent's login change")
	}
	return nil
}

// Hold holds a child started with a detach grace, as an adopting Hub does
// (childproto's hold.go): it returns once the child answered the hold, or
// fails within ctx (Unavailable). The returned body ends when the child
// ends (a clean EOF) or the connection breaks (an error); closing it
// lets the child go.
func (s *Session) Hold(ctx context.Context) (io.ReadCloser, error) {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel) // until the child answers
	req, err := http.NewRequestWithContext(hctx, http.MethodGet, "http://session"+childproto.HoldPath, nil)
	if err != nil {
		cancel()
		return nil, hub.Wrap(hub.Internal, err, "session hold request")
	}
	resp, err := s.client.Do(req)
	stop()
	if err != nil {
		cancel()
		return nil, hub.Wrap(hub.Unavailable, err, "session did not answer")
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, hub.Wrap(hub.Unavailable, fmt.Errorf("hold: status %s", resp.Status), "session could not be held")
	}
	return &heldBody{ReadCloser: resp.Body, cancel: cancel}, nil
}

// heldBody is a hold's body; Close also ends its request.
type heldBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *heldBody) Close() error {
	b.cancel()
	return b.ReadCloser.Close()
}

// LetGo records that the session's end, which the backend brings about,
// lets the child go rather than ends it (a detach): Finish does not log it
// as an end on its own.
func (s *Session) LetGo() { s.markStopping() }
