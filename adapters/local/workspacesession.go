package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

// workspaceSession is one child: a hub.WorkspaceSession.
type workspaceSession struct {
	b    *Backend
	log  *slog.Logger
	id   string
	sock string
	cmd  *exec.Cmd
	pid  int

	pipes   *pipes
	ready   chan error          // the first stdout line: nil for the readiness line
	outDone chan struct{}       // closed when stdout is fully read
	errDone chan struct{}       // closed when stderr is fully read
	tail    tail                // the end of stderr, for logs
	client  *http.Client        // facts and feed requests over the socket
	proj    *credenv.Projection // its credentials, closed by reap
	feeds   feedSource

	mu       sync.Mutex
	exited   bool // the child has exited: its pid must not be signalled any more
	stopping bool // the end was asked for (Stop, or a failed start)

	// exitErr and state are set by reap before done is closed.
	exitErr error
	state   *os.ProcessState
	done    chan struct{}
}

func newWorkspaceSession(b *Backend, id, sock string, cmd *exec.Cmd, p *pipes) *workspaceSession {
	s := &workspaceSession{
		b: b, log: b.log.With("workspace", id, "pid", cmd.Process.Pid), id: id, sock: sock,
		cmd: cmd, pid: cmd.Process.Pid, pipes: p,
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

// Facts asks the child over its socket; the deadline is ctx's.
func (s *workspaceSession) Facts(ctx context.Context) (hub.WorkspaceSessionFacts, error) {
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
func (s *workspaceSession) Dial(ctx context.Context) (net.Conn, error) {
	select {
	case <-s.done:
		return nil, hub.Errorf(hub.Unavailable, "session has ended")
	default:
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", s.sock)
	if err != nil {
		return nil, hub.Wrap(hub.Unavailable, err, "session unreachable")
	}
	return c, nil
}

// Done is closed once the child has been reaped and cleaned up after.
func (s *workspaceSession) Done() <-chan struct{} { return s.done }

// Stop sends SIGTERM to the child's process group, waits up to StopGrace
// (cut short when ctx ends), then sends SIGKILL and waits up to StopGrace
// more for the reap; that last wait ignores ctx, since a kill normally
// lands at once and giving up early would only leave the end unconfirmed.
// Concurrent and repeated calls are safe; on an ended session Stop is a
// no-op.
func (s *workspaceSession) Stop(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	default:
	}
	grace := s.b.opts.StopGrace
	s.signal(syscall.SIGTERM)
	polite := time.NewTimer(grace)
	defer polite.Stop()
	select {
	case <-s.done:
		return nil
	case <-polite.C:
		s.log.Warn("session ignored SIGTERM; killing it", "grace", grace)
	case <-ctx.Done():
		s.log.Warn("session stop cut short; killing it", "err", ctx.Err())
	}
	s.signal(syscall.SIGKILL)
	forced := time.NewTimer(grace)
	defer forced.Stop()
	select {
	case <-s.done:
		return nil
	case <-forced.C:
		s.log.Error("session exit could not be confirmed after SIGKILL")
		return hub.Wrap(hub.Internal, errors.New("no exit after SIGKILL"),
			"session exit could not be confirmed after termination")
	}
}

// OpenFeed opens the feed over the session's socket: a GET of the child's
// feed endpoint, read as Server-Sent Events (see feedSource and feed).
func (s *workspaceSession) OpenFeed(ctx context.Context, req hub.FeedRequest) (hub.Feed, error) {
	return s.feeds.open(ctx, req)
}

// AgentLoginChanged POSTs the change to the child (childproto.AgentLogin)
// over its socket and returns once the child answered 204, within ctx. An
// id no agent can have (childproto.ValidAgentID: the child refuses such
// agents at its start) is no agent of the session: nil, without asking.
func (s *workspaceSession) AgentLoginChanged(ctx context.Context, agent string) error {
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
