package shells

import (
	"os"
	"sync"
)

// Kind says what a shell runs.
type Kind string

// The kinds of shells.
const (
	KindShell Kind = "shell" // a person's login shell in a PTY
	KindAgent Kind = "agent" // a terminal an agent opened (ACP terminal/create), read-only
)

// Info is a shell as the API lists it (the contract's ShellInfo).
type Info struct {
	ID       string `json:"id"`
	Label    string `json:"label"`
	Kind     Kind   `json:"kind"`
	ReadOnly bool   `json:"readOnly"`
	Attached bool   `json:"attached"`
	Running  bool   `json:"running"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// shell is one terminal of the registry: a PTY shell (pty set) or an
// agent's terminal (pty nil, fed through AgentTerminal). Its lock guards
// every field below it; changed is closed and replaced on every change, so
// the goroutines that wait on it (the PTY reader, each client's sender)
// select on it beside their own ends.
type shell struct {
	id   string
	kind Kind
	reg  *Registry
	pty  *os.File      // nil for an agent's terminal
	in   chan []byte   // keys for the PTY, written by one goroutine
	gone chan struct{} // closed once the process is reaped and the output read (PTY shells)
	stop sync.Once     // the SIGHUP, SIGKILL sequence of a close
	proc *process      // nil for an agent's terminal

	mu         sync.Mutex
	changed    chan struct{}
	label      string
	ring       *ring
	cols, rows int
	clients    map[*client]struct{}
	ended      bool // the output ended: the process exited (or the agent's terminal did) and all was read
	exitCode   *int
	closed     bool // closed by a person or released by its agent; no longer listed
	blocked    bool // the PTY reader waits for a client before it writes the ring
}

// notify wakes everything waiting on s; the caller holds s.mu.
func (s *shell) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// info is s as listed; the caller holds s.mu.
func (s *shell) info() Info {
	in := Info{ID: s.id, Label: s.label, Kind: s.kind, ReadOnly: s.kind == KindAgent,
		Attached: len(s.clients) > 0, Running: !s.ended}
	if s.exitCode != nil {
		code := *s.exitCode
		in.ExitCode = &code
	}
	return in
}

// readOnly reports whether people may type into s.
func (s *shell) readOnly() bool { return s.kind == KindAgent }

// lowestSent is the lowest offset an attached client has not been sent
// yet, and whether any client is attached; the caller holds s.mu.
func (s *shell) lowestSent() (int64, bool) {
	var low int64
	some := false
	for c := range s.clients {
		if !some || c.sent < low {
			low, some = c.sent, true
		}
	}
	return low, some
}

// append writes p to the ring. For a PTY shell it first waits until no
// attached client would lose a byte it was not sent (the program then
// stops writing, as on a terminal nobody reads); an agent's terminal
// never waits: its lagging viewers skip. The caller does not hold s.mu.
func (s *shell) append(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.kind == KindShell && !s.closed {
		low, some := s.lowestSent()
		if !some || s.ring.room(low) >= int64(len(p)) {
			break
		}
		if !s.blocked {
			s.blocked = true
			s.notify() // watchers see it wait
		}
		wait := s.changed
		s.mu.Unlock()
		<-wait
		s.mu.Lock()
	}
	s.blocked = false
	s.ring.write(p)
	s.notify()
}

// end records that the output ended with the exit code (nil: none, a
// signal) and wakes every client, which sends what is left and then the
// exit message.
func (s *shell) end(code *int) {
	s.mu.Lock()
	if !s.ended {
		s.ended, s.exitCode = true, code
		s.notify()
	}
	s.mu.Unlock()
	s.reg.moved()
}
