package fakes

import (
	"context"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// Hosts is a fake hub.HostConnector: every host is a machine of its own,
// with its own file system (home /home/<host name>), git and backend, so a
// test can tell which machine an operation ran on. It is safe for
// concurrent use.
type Hosts struct {
	mu       sync.Mutex
	machines map[string]*Machine // by host name
	connects map[string]int      // Connect calls, by host name
}

// Machine is one fake host.
type Machine struct {
	FS      *FS
	Git     *Git
	Backend *Backend

	mu       sync.Mutex
	checkErr error // what Check returns
	checks   int
	closes   int
	reaps    []int // Backend's total starts at each Reap
}

// NewHosts returns a connector with no machine yet.
func NewHosts() *Hosts {
	return &Hosts{machines: map[string]*Machine{}, connects: map[string]int{}}
}

// Machine returns the machine of the named host, making it on first use.
func (h *Hosts) Machine(name string) *Machine {
	h.mu.Lock()
	defer h.mu.Unlock()
	m, ok := h.machines[name]
	if !ok {
		fsys := NewFS("/home/" + name)
		m = &Machine{FS: fsys, Git: NewGit(fsys), Backend: NewBackendNamed(hub.HostBackend(name))}
		m.Backend.Data = fsys
		h.machines[name] = m
	}
	return m
}

// Connects reports how often the named host was connected.
func (h *Hosts) Connects(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.connects[name]
}

// Connect returns the place of host's machine.
func (h *Hosts) Connect(host hub.Host) (hub.HostPlace, error) {
	m := h.Machine(host.Name)
	h.mu.Lock()
	h.connects[host.Name]++
	h.mu.Unlock()
	return place{m}, nil
}

// FailCheck makes Check return err (nil: succeed again).
func (m *Machine) FailCheck(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.checkErr = err
}

// Checks and Closes report how often the machine was checked and closed.
func (m *Machine) Checks() int { m.mu.Lock(); defer m.mu.Unlock(); return m.checks }

// Reaps reports, for each Reap so far, how many sessions the machine's
// backend had started by then: a test tells the order of reaps and
// starts by it.
func (m *Machine) Reaps() []int { m.mu.Lock(); defer m.mu.Unlock(); return slices.Clone(m.reaps) }

// Closes reports how often a place of the machine was closed.
func (m *Machine) Closes() int { m.mu.Lock(); defer m.mu.Unlock(); return m.closes }

// place is a connected Machine: a hub.HostPlace.
type place struct{ *Machine }

func (p place) Name() string { return p.Backend.Name() }
func (p place) Start(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	return p.Backend.Start(ctx, spec)
}
func (p place) RemoveWorkspaceData(ctx context.Context, id string) error {
	return p.Backend.RemoveWorkspaceData(ctx, id)
}
func (p place) FS() hub.FS         { return p.Machine.FS }
func (p place) Git() hub.GitRunner { return p.Machine.Git }

func (p place) Check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checks++
	if err := ctx.Err(); err != nil {
		return hub.Wrap(hub.Unavailable, err, "the host could not be reached")
	}
	return p.checkErr
}

// Adopt adopts a session of the machine's backend that a Hub let go
// (backend_adopt.go).
func (p place) Adopt(ctx context.Context, spec hub.WorkspaceSessionSpec) (hub.WorkspaceSession, error) {
	return p.Backend.adopt(ctx, spec)
}

// Reap records the call and ends the sessions let go and not adopted,
// returning their workspaces.
func (p place) Reap(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	starts := p.Backend.TotalStarts()
	p.mu.Lock()
	p.reaps = append(p.reaps, starts)
	p.mu.Unlock()
	return p.Backend.reapDetached(), nil
}

func (p place) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closes++
	return nil
}
