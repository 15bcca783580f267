package fakes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.Backend = (*Backend)(nil)

// factsRevision is the workspace revision fake sessions report by default.
const factsRevision = 24

// Backend is a hub.Backend whose sessions are in-memory: Start answers at
// once unless a test scripts otherwise, and Dial reaches a small HTTP
// handler speaking the child's internal protocol (see adapters/child)
// over net.Pipe. Like the local backend, it refuses to start a workspace
// whose session is still running (Conflict). Safe for concurrent use.
type Backend struct {
	// Dirs, when set, says which paths are existing directories: Start of
	// any other path fails as the local backend's does for a missing
	// folder. Set it before the first Start; it is called without locks.
	Dirs func(path string) bool
	// Data, when set, is where the backend keeps each workspace's data
	// directory (DataDir), as the local backend keeps one in the state
	// directory: Start makes it, RemoveWorkspaceData removes it through
	// Data's RemoveEmpty (so its Before hook can crash there), and a
	// Backend made later over the same FS finds it. Set it before the
	// first Start.
	Data *FS

	mu       sync.Mutex
	running  map[string]*workspaceSession
	starts   map[string]int
	specs    map[string]hub.WorkspaceSessionSpec // the last Start's, by workspace
	facts    map[string]hub.WorkspaceSessionFacts
	factsErr map[string]error
	failNext error
	hold     chan struct{} // Starts wait for it to close; nil when not held
	held     int           // Starts waiting on a hold now
	changed  chan struct{} // closed and replaced whenever held changes
	feeds    feedScript
	notify   notifyScript            // the notification feeds (backend_notify.go)
	logins   agentLogins             // the sessions' agents and the login changes told (backend_agentlogin.go)
	handlers map[string]http.Handler // SetSessionHandler's, by workspace
	name     string                  // what Name reports
	detached map[string]bool         // sessions let go and still running, by workspace (backend_adopt.go)
	adopts   map[string]int          // adoptions, by workspace
}

// NewBackend returns a Backend named "local" with no session running.
func NewBackend() *Backend { return NewBackendNamed(hub.LocalBackend) }

// NewBackendNamed returns a Backend with this name and no session
// running: a host's is hub.HostBackend of its name.
func NewBackendNamed(name string) *Backend {
	return &Backend{
		running: map[string]*workspaceSession{}, starts: map[string]int{}, specs: map[string]hub.WorkspaceSessionSpec{},
		facts: map[string]hub.WorkspaceSessionFacts{}, factsErr: map[string]error{},
		changed: make(chan struct{}), name: name, detached: map[string]bool{}, adopts: map[string]int{},
	}
}

// Name reports the backend's name.
func (b *Backend) Name() string { return b.name }

// Start counts the call, waits while the backend is held (or until ctx
// ends: ctx's error), then fails with a scripted or real reason or returns
// a running session.
func (b *Backend) Start(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	b.mu.Lock()
	b.starts[spec.WorkspaceID]++
	b.specs[spec.WorkspaceID] = spec
	gate := b.hold
	if gate != nil {
		b.setHeld(+1)
	}
	b.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		b.mu.Lock()
		b.setHeld(-1)
		b.mu.Unlock()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec.WorkspaceID == "" {
		return nil, hub.Errorf(hub.Internal, "session has no workspace id")
	}
	dirOK := b.Dirs == nil || b.Dirs(spec.Path)

	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.failNext; err != nil {
		b.failNext = nil
		return nil, err
	}
	if !dirOK {
		return nil, hub.Wrap(hub.Internal, fmt.Errorf("%s: no such directory", spec.Path),
			"workspace folder is missing or not a directory")
	}
	if _, ok := b.running[spec.WorkspaceID]; ok {
		return nil, hub.Errorf(hub.Conflict, "the session of this workspace is already running")
	}
	if b.Data != nil {
		b.Data.MkdirAll(DataDir(spec.WorkspaceID))
	}
	s := newWorkspaceSession(b, spec.WorkspaceID)
	b.running[spec.WorkspaceID] = s
	return s, nil
}

// DataDir is where a Backend with Data keeps the data of workspace id.
func DataDir(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "/state/workspaces/" + hex.EncodeToString(sum[:8])
}

// RemoveWorkspaceData removes the data directory of id, when the backend
// keeps data (Data); a session of id still running is a Conflict.
func (b *Backend) RemoveWorkspaceData(ctx context.Context, id string) error {
	b.mu.Lock()
	_, running := b.running[id]
	b.mu.Unlock()
	switch {
	case running:
		return hub.Errorf(hub.Conflict, "the session of this workspace is running")
	case b.Data == nil:
		return nil
	}
	if err := b.Data.RemoveEmpty(DataDir(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return hub.Wrap(hub.Internal, err, "workspace data could not be removed")
	}
	return nil
}

// setHeld moves the count of held Starts and wakes WaitHeld. b.mu is held.
func (b *Backend) setHeld(delta int) {
	b.held += delta
	close(b.changed)
	b.changed = make(chan struct{})
}

// FailNextStart makes the next Start that gets past its hold and its ctx
// fail with err, without starting anything.
func (b *Backend) FailNextStart(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failNext = err
}

// Hold makes every Start from now on wait until release is called (or its
// ctx ends). Calling release again does nothing.
func (b *Backend) Hold() (release func()) {
	gate := make(chan struct{})
	b.mu.Lock()
	b.hold = gate
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.hold == gate {
				b.hold = nil
			}
			b.mu.Unlock()
			close(gate)
		})
	}
}

// WaitHeld returns once at least n Starts are waiting on a Hold, or with
// ctx's error. It lets a test act while a start is known to be in flight.
func (b *Backend) WaitHeld(ctx context.Context, n int) error {
	for {
		b.mu.Lock()
		held, changed := b.held, b.changed
		b.mu.Unlock()
		if held >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// StartCount reports how many times Start was called for id, failed and
// cancelled calls included.
func (b *Backend) StartCount(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.starts[id]
}

// TotalStarts reports how many sessions Start began, of any workspace.
func (b *Backend) TotalStarts() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, c := range b.starts {
		n += c
	}
	return n
}

// Spec returns what the last Start of id was asked: the workspace's
// folder and the credentials its session was lent.
func (b *Backend) Spec(id string) hub.WorkspaceSessionSpec {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.specs[id]
}

// Running reports whether a session of id is running.
func (b *Backend) Running(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.running[id]
	return ok
}

// Crash ends the running session of id on its own, as a dying child
// would: its Done closes and its connections break. Without a running
// session of id it does nothing.
func (b *Backend) Crash(id string) { b.CrashBecause(id, "") }

// CrashBecause is Crash of a session that says why it ended
// (hub.EndReporter): reason, or nothing when "".
func (b *Backend) CrashBecause(id, reason string) {
	b.mu.Lock()
	s := b.running[id]
	if s != nil {
		s.reason = reason
	}
	b.mu.Unlock()
	if s != nil {
		s.end()
	}
}

// SetFacts sets what sessions of id report, from now on (the default is
// revision 24 with no shells).
func (b *Backend) SetFacts(id string, f hub.WorkspaceSessionFacts) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f.Shells = slices.Clone(f.Shells)
	b.facts[id] = f
}

// SetSessionHandler makes the sessions of id hand h every request their
// own protocol does not serve (which answers 404 without one): a test's
// stand-in for the part of the child it exercises, such as a shell's
// attach WebSocket. A connection h hijacks outlives Stop, as one a
// stopped child never closed would; nil removes h.
func (b *Backend) SetSessionHandler(id string, h http.Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.handlers == nil {
		b.handlers = map[string]http.Handler{}
	}
	if h == nil {
		delete(b.handlers, id)
		return
	}
	b.handlers[id] = h
}

// FailFacts makes Facts of sessions of id fail with err from now on; a
// nil err ends that. It affects the Facts method only, not Start.
func (b *Backend) FailFacts(id string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		delete(b.factsErr, id)
		return
	}
	b.factsErr[id] = err
}

// factsOf returns the facts of id's sessions, and the FailFacts error
// (the facts are filled in either way).
func (b *Backend) factsOf(id string) (hub.WorkspaceSessionFacts, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.facts[id]
	if !ok {
		f.WorkspaceAPIRevision = factsRevision
	}
	f.Shells = slices.Clone(f.Shells)
	if f.Shells == nil {
		f.Shells = []hub.Shell{}
	}
	return f, b.factsErr[id]
}

// workspaceSession is one fake running session. Its HTTP server runs from Start
// to end and serves the connections Dial hands it.
type workspaceSession struct {
	b       *Backend
	id      string
	ln      *pipeListener
	srv     *http.Server
	served  chan struct{}   // closed when the server's Serve has returned
	notices *sessionNotices // its notification feed's log, guarded by b.mu (backend_notify.go)
	once    sync.Once
	done    chan struct{}
	reason  string // why it ended on its own (CrashBecause), guarded by b.mu
}

// EndReason is what CrashBecause said.
func (s *workspaceSession) EndReason() string {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.reason
}

func newWorkspaceSession(b *Backend, id string) *workspaceSession {
	s := &workspaceSession{b: b, id: id, ln: newPipeListener(), served: make(chan struct{}), notices: newSessionNotices(),
		done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(s.ln)
	}()
	return s
}

func (s *workspaceSession) Facts(ctx context.Context) (hub.WorkspaceSessionFacts, error) {
	if err := ctx.Err(); err != nil {
		return hub.WorkspaceSessionFacts{}, hub.Wrap(hub.Unavailable, err, "session did not answer")
	}
	select {
	case <-s.done:
		return hub.WorkspaceSessionFacts{}, hub.Errorf(hub.Unavailable, "session has ended")
	default:
	}
	f, err := s.b.factsOf(s.id)
	if err != nil {
		return hub.WorkspaceSessionFacts{}, err
	}
	return f, nil
}

// Dial hands one end of a net.Pipe to the session's server.
func (s *workspaceSession) Dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case s.ln.conns <- server:
		return client, nil
	case <-s.ln.closed:
		client.Close()
		server.Close()
		return nil, hub.Errorf(hub.Unavailable, "session has ended")
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, hub.Wrap(hub.Unavailable, ctx.Err(), "session unreachable")
	}
}

func (s *workspaceSession) Done() <-chan struct{} { return s.done }

// Stop ends the session at once; it never fails.
func (s *workspaceSession) Stop(context.Context) error {
	s.end()
	return nil
}

// end frees the workspace for a new Start, closes the server and its
// connections, waits for Serve to return, and closes done: once Done is
// closed, nothing of the session is left.
func (s *workspaceSession) end() {
	s.once.Do(func() {
		s.b.mu.Lock()
		if s.b.running[s.id] == s {
			delete(s.b.running, s.id)
		}
		s.b.endNotificationsOf(s)
		s.b.mu.Unlock()
		s.ln.Close()
		s.srv.Close()
		<-s.served
		s.b.endFeedsOf(s)
		close(s.done)
	})
}

// serveHTTP speaks the child's protocol: facts, the session endpoint under
// /s/{id}/, and a JSON 404 for anything else, all uncached.
func (s *workspaceSession) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	var body any
	s.b.mu.Lock()
	extra := s.b.handlers[s.id]
	s.b.mu.Unlock()
	switch {
	case extra != nil && r.URL.Path != "/_wharf/facts" && r.URL.Path != "/s/"+s.id+"/api/session":
		w.Header().Del("Content-Type")
		w.Header().Del("Cache-Control")
		extra.ServeHTTP(w, r)
		return
	case r.Method == http.MethodGet && r.URL.Path == "/_wharf/facts":
		f, _ := s.b.factsOf(s.id) // FailFacts concerns the Facts method only
		type shell struct {
			Attached bool   `json:"attached"`
			Label    string `json:"label"`
		}
		shells := make([]shell, 0, len(f.Shells))
		for _, sh := range f.Shells {
			shells = append(shells, shell{sh.Attached, sh.Label})
		}
		body = struct {
			WorkspaceAPIRevision int     `json:"workspaceApiRevision"`
			Shells               []shell `json:"shells"`
		}{f.WorkspaceAPIRevision, shells}
	case r.Method == http.MethodGet && r.URL.Path == "/s/"+s.id+"/api/session":
		body = struct {
			WorkspaceID          string `json:"workspaceId"`
			WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
		}{s.id, factsRevision}
	default:
		w.WriteHeader(http.StatusNotFound)
		body = struct {
			Error string `json:"error"`
		}{"not found"}
	}
	_ = json.NewEncoder(w).Encode(body)
}

// pipeListener is a net.Listener whose connections are net.Pipe ends
// handed over by Dial.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "session" }
