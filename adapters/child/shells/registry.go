package shells

import (
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// Bounds of a workspace's shells.
const (
	// MaxUserShells bounds the shells people open in a workspace; agents'
	// terminals do not count (adapters/acp bounds them).
	MaxUserShells = 8
	// RingBytes is each shell's scrollback, kept in memory only.
	RingBytes = 256 << 10
	// Window bounds the output sent to a client and not acknowledged.
	Window = 256 << 10
	// MaxLabel bounds a label, in characters.
	MaxLabel = 64
	// MaxCols and MaxRows bound a terminal's size.
	MaxCols, MaxRows = 1000, 500
	// DefaultNoAck is how long a client that acknowledges nothing may
	// hold back output waiting for it before it is closed.
	DefaultNoAck = 30 * time.Second
	// closeWait bounds how long Close waits for the shells' processes.
	closeWait = killGrace + drainGrace + 500*time.Millisecond
)

// Options configure a Registry.
type Options struct {
	// Dir is the workspace folder, where shells start.
	Dir string
	// Env is the session's environment; a shell gets it with TERM and
	// COLORTERM set, and runs $SHELL of it (else the passwd entry's,
	// else /bin/sh).
	Env []string
	// Clock times the no-ack close. Default hub.SystemClock.
	Clock hub.Clock
	// NoAck is how long an attached client may leave output waiting
	// without acknowledging any; default DefaultNoAck.
	NoAck time.Duration
	// Logger receives failures to start a shell. Default discards.
	Logger *slog.Logger
}

// Registry holds a workspace session's shells. It is safe for concurrent
// use.
type Registry struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	order   []*shell // creation order
	nextID  int
	nextTag int   // the N of "shell N"
	rev     int64 // moves when the list or an attached flag changes
	wake    chan struct{}
	closed  bool
	running sync.WaitGroup // the PTY shells' run goroutines
}

// New returns an empty Registry.
func New(opts Options) *Registry {
	if opts.Clock == nil {
		opts.Clock = hub.SystemClock{}
	}
	if opts.NoAck <= 0 {
		opts.NoAck = DefaultNoAck
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, log: log, wake: make(chan struct{})}
}

// moved moves the revision and wakes its watchers.
func (r *Registry) moved() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rev++
	close(r.wake)
	r.wake = make(chan struct{})
}

// Revision is the registry's revision and a channel closed when it next
// moves: at every change of the list, of a label, of a shell's running
// state or of an attached flag.
func (r *Registry) Revision() (int64, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev, r.wake
}

// List returns the shells in creation order.
func (r *Registry) List() []Info {
	r.mu.Lock()
	held := append([]*shell(nil), r.order...)
	r.mu.Unlock()
	out := make([]Info, 0, len(held))
	for _, s := range held {
		s.mu.Lock()
		out = append(out, s.info())
		s.mu.Unlock()
	}
	return out
}

// CheckLabel trims label and checks it by the project's one rule for a
// name a person reads (hub.NormalizeVisibleText: no control or format
// character, which could hide or reorder what is shown), at most MaxLabel
// characters.
func CheckLabel(label string) (string, error) {
	label, err := hub.NormalizeVisibleText("a shell's label", label)
	if err != nil {
		return "", err
	}
	if utf8.RuneCountInString(label) > MaxLabel {
		return "", hub.Errorf(hub.Invalid, "a label holds 1 to %d characters", MaxLabel)
	}
	return label, nil
}

// CheckSize checks a terminal's size.
func CheckSize(cols, rows int) error {
	if cols < 1 || cols > MaxCols || rows < 1 || rows > MaxRows {
		return hub.Errorf(hub.Invalid, "a terminal has 1 to %d columns and 1 to %d rows", MaxCols, MaxRows)
	}
	return nil
}

// Create starts a login shell in the workspace folder. An empty label is
// "shell N". Invalid for a bad label or size, RateLimited beyond
// MaxUserShells, Unavailable once the registry is closed or when the
// shell cannot start.
func (r *Registry) Create(label string, cols, rows int) (Info, error) {
	if label != "" {
		var err error
		if label, err = CheckLabel(label); err != nil {
			return Info{}, err
		}
	}
	if err := CheckSize(cols, rows); err != nil {
		return Info{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.closed:
		return Info{}, hub.Errorf(hub.Unavailable, "the workspace session is stopping")
	case r.userShells() >= MaxUserShells:
		return Info{}, hub.Errorf(hub.RateLimited, "too many shells in this workspace")
	}
	dir := r.opts.Dir
	m, proc, err := startPTY(loginShell(r.opts.Env), dir, shellEnv(r.opts.Env, dir), cols, rows)
	if err != nil {
		r.log.Warn("a shell could not start", "err", err)
		return Info{}, hub.Errorf(hub.Unavailable, "the shell could not start")
	}
	r.nextTag++
	if label == "" {
		label = "shell " + strconv.Itoa(r.nextTag)
	}
	s := r.add(KindShell, label, cols, rows)
	s.pty, s.proc = m, proc
	s.in = make(chan []byte, 4)
	in := s.info()
	r.running.Add(1)
	go func() {
		defer r.running.Done()
		s.run()
	}()
	return in, nil
}

// add lists a new shell; the caller holds r.mu. It moves the revision.
func (r *Registry) add(kind Kind, label string, cols, rows int) *shell {
	r.nextID++
	s := &shell{id: "s" + strconv.Itoa(r.nextID), kind: kind, reg: r, gone: make(chan struct{}),
		changed: make(chan struct{}), label: label, ring: newRing(RingBytes), cols: cols, rows: rows,
		clients: map[*client]struct{}{}}
	r.order = append(r.order, s)
	r.rev++
	close(r.wake)
	r.wake = make(chan struct{})
	return s
}

// userShells counts the shells people opened; the caller holds r.mu.
func (r *Registry) userShells() int {
	n := 0
	for _, s := range r.order {
		if s.kind == KindShell {
			n++
		}
	}
	return n
}

// get returns the listed shell id, or NotFound.
func (r *Registry) get(id string) (*shell, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.order {
		if s.id == id {
			return s, nil
		}
	}
	return nil, hub.Errorf(hub.NotFound, "unknown shell")
}

// Rename relabels the shell id. NotFound, Invalid for a bad label,
// Conflict for an agent's terminal.
func (r *Registry) Rename(id, label string) (Info, error) {
	s, err := r.get(id)
	if err != nil {
		return Info{}, err
	}
	if s.kind == KindAgent {
		return Info{}, hub.Errorf(hub.Conflict, "an agent's terminal cannot be renamed")
	}
	if label, err = CheckLabel(label); err != nil {
		return Info{}, err
	}
	s.mu.Lock()
	s.label = label
	in := s.info()
	s.mu.Unlock()
	r.moved()
	return in, nil
}

// Remove closes the shell id: it leaves the list at once, its clients are
// closed (1000 "shell closed") and its process group gets SIGHUP, then
// SIGKILL after 2 s. NotFound; Conflict for an agent's terminal.
func (r *Registry) Remove(id string) error {
	s, err := r.get(id)
	if err != nil {
		return err
	}
	if s.kind == KindAgent {
		return hub.Errorf(hub.Conflict, "an agent's terminal closes with its agent")
	}
	r.drop(s)
	return nil
}

// drop unlists s, closes its clients and hangs its process up.
func (r *Registry) drop(s *shell) {
	r.mu.Lock()
	for i, o := range r.order {
		if o == s {
			r.order = append(r.order[:i:i], r.order[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.notify()
	s.mu.Unlock()
	if s.proc != nil {
		s.hangUp()
	}
	r.moved()
}

// Close closes every shell and waits, within a bound, for their
// processes to be gone. Create fails afterwards.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	held := append([]*shell(nil), r.order...)
	r.mu.Unlock()
	for _, s := range held {
		r.drop(s)
	}
	done := make(chan struct{})
	go func() {
		r.running.Wait()
		close(done)
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		r.log.Warn("shells still running after their close")
	}
}
