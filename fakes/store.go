// Package fakes holds deterministic, in-memory implementations of the
// hub's ports for tests and examples. Each passes the same conformance
// suite in fakes/porttest as its real adapter.
package fakes

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wharfhub/wharf/hub"
)

var _ hub.Store = (*Store)(nil)

// Store is a hub.Store in memory. Update works on a copy of the state and
// swaps it in only when the closure returns nil, so rollback behaves like a
// database transaction.
type Store struct {
	// BeforeCommit, when set, is called by every Update whose closure
	// succeeded, just before its changes are committed. An error it returns
	// fails the commit, as a full disk would; tests also crash the Hub there
	// (by panicking) to stop it between two steps of an operation. Either
	// way the Update keeps nothing. Set it before the store is shared.
	BeforeCommit func() error

	db       *sharedDB
	ext      atomic.Uint64 // commits by the other handles of db
	closed   bool
	failNext error
}

// sharedDB is the contents every handle of one store (NewStore and its
// Peers) reads and writes.
type sharedDB struct {
	mu      sync.RWMutex // held for reading by View, for writing by Update
	st      *state
	handles []*Store
}

// state is one version of the store's contents. Update mutates a clone, so
// everything reachable from a committed state must never be mutated in
// place: values holding pointers or slices (personal states, journal
// data, credentials' capabilities and secrets, push devices' lists and
// subscriptions) are copied on the way in and on the way out instead.
type state struct {
	users    map[string]hub.User
	sessions map[hub.DeviceSessionDigest]hub.DeviceSession

	workspaces  []hub.Workspace // in registration order
	usedIDs     map[string]bool // every workspace id ever created
	journals    []hub.Journal   // ascending ID
	lastJournal int64           // the highest journal ID ever given
	personal    map[userWorkspace]hub.PersonalState
	finishes    map[string]uint64        // the finish mark of each workspace
	viewMarks   map[userWorkspace]uint64 // each user's view mark of each workspace
	settings    map[string]string

	credentials   []storedCredential                   // in creation order
	assignments   map[assignmentPlace]assignmentHolder // the credential holding each place
	toolOverrides map[hub.CredentialToolName]string    // each set override's path

	provenance map[string]hub.WorktreeProvenance // by checkout id

	hosts map[string]hub.Host // by name

	pushDevices    []hub.PushDevice                       // in creation order
	pushDeliveries map[hub.PushDeliveryKey]storedDelivery // by key
	lastDelivery   uint64                                 // the highest insertion number given
	notifyCursors  map[string]string                      // each workspace's feed cursor
}

// userWorkspace keys the per-user, per-workspace records.
type userWorkspace struct{ user, workspace string }

func (s *state) clone() *state {
	return &state{
		users:       maps.Clone(s.users),
		sessions:    maps.Clone(s.sessions),
		workspaces:  slices.Clone(s.workspaces),
		usedIDs:     maps.Clone(s.usedIDs),
		journals:    slices.Clone(s.journals),
		lastJournal: s.lastJournal,
		personal:    maps.Clone(s.personal),
		finishes:    maps.Clone(s.finishes),
		viewMarks:   maps.Clone(s.viewMarks),
		settings:    maps.Clone(s.settings),

		credentials:   slices.Clone(s.credentials),
		assignments:   maps.Clone(s.assignments),
		toolOverrides: maps.Clone(s.toolOverrides),

		provenance: maps.Clone(s.provenance),

		hosts: maps.Clone(s.hosts),

		pushDevices:    slices.Clone(s.pushDevices),
		pushDeliveries: maps.Clone(s.pushDeliveries),
		lastDelivery:   s.lastDelivery,
		notifyCursors:  maps.Clone(s.notifyCursors),
	}
}

// NewStore returns an empty Store.
func NewStore() *Store {
	s := &Store{db: &sharedDB{st: &state{
		users:     map[string]hub.User{},
		sessions:  map[hub.DeviceSessionDigest]hub.DeviceSession{},
		usedIDs:   map[string]bool{},
		personal:  map[userWorkspace]hub.PersonalState{},
		finishes:  map[string]uint64{},
		viewMarks: map[userWorkspace]uint64{},
		settings:  map[string]string{},

		assignments:   map[assignmentPlace]assignmentHolder{},
		toolOverrides: map[hub.CredentialToolName]string{},

		provenance: map[string]hub.WorktreeProvenance{},

		hosts: map[string]hub.Host{},

		pushDeliveries: map[hub.PushDeliveryKey]storedDelivery{},
		notifyCursors:  map[string]string{},
	}}}
	s.db.handles = []*Store{s}
	return s
}

// Peer returns another handle over the same records, as a second process
// opening the same database would get: each sees the other's commits, in
// its ExternalGeneration too. Closing one handle leaves the other open.
func (s *Store) Peer() *Store {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	p := &Store{db: s.db}
	s.db.handles = append(s.db.handles, p)
	return p
}

// ExternalGeneration counts the commits of the store's other handles
// (Peer).
func (s *Store) ExternalGeneration() uint64 { return s.ext.Load() }

var errClosed = hub.Errorf(hub.Internal, "store is closed")

// FailNextCommit makes the next Update run its closure and then fail with
// err instead of committing, as a database whose commit fails would.
func (s *Store) FailNextCommit(err error) {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	s.failNext = err
}

// View runs fn on a read-only snapshot.
func (s *Store) View(ctx context.Context, fn func(hub.Tx) error) error {
	s.db.mu.RLock()
	defer s.db.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return hub.Wrap(hub.Internal, err, "store view cancelled")
	}
	return fn(&tx{st: s.db.st})
}

// Update runs fn on a copy and commits the copy when fn returns nil.
func (s *Store) Update(ctx context.Context, fn func(hub.Tx) error) error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	if s.closed {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return hub.Wrap(hub.Internal, err, "store update cancelled")
	}
	work := s.db.st.clone()
	if err := fn(&tx{st: work, writable: true}); err != nil {
		return err
	}
	if err := s.failNext; err != nil {
		s.failNext = nil
		return hub.Wrap(hub.Internal, err, "store commit failed")
	}
	if s.BeforeCommit != nil {
		if err := s.BeforeCommit(); err != nil {
			return hub.Wrap(hub.Internal, err, "store commit failed")
		}
	}
	s.db.st = work
	for _, p := range s.db.handles {
		if p != s {
			p.ext.Add(1)
		}
	}
	return nil
}

// Close marks the store closed.
func (s *Store) Close() error {
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	s.closed = true
	return nil
}

type tx struct {
	st       *state
	writable bool
}

var errReadOnly = hub.Wrap(hub.Internal, errors.New("write in a read-only transaction"), "store write refused")

func (t *tx) write() error {
	if !t.writable {
		return errReadOnly
	}
	return nil
}

func (t *tx) User(name string) (hub.User, error) {
	u, ok := t.st.users[name]
	if !ok {
		return hub.User{}, hub.Errorf(hub.NotFound, "user %q not found", name)
	}
	return u, nil
}

func (t *tx) Users() ([]hub.User, error) {
	us := make([]hub.User, 0, len(t.st.users))
	for _, u := range t.st.users {
		us = append(us, u)
	}
	sort.Slice(us, func(i, j int) bool { return us[i].Name < us[j].Name })
	return us, nil
}

func (t *tx) CountUsers() (int, error) { return len(t.st.users), nil }

func (t *tx) CreateUser(u hub.User) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, ok := t.st.users[u.Name]; ok {
		return hub.Errorf(hub.Conflict, "user %q already exists", u.Name)
	}
	t.st.users[u.Name] = u
	return nil
}

func (t *tx) SetPasswordHash(name, hash string) error {
	if err := t.write(); err != nil {
		return err
	}
	u, ok := t.st.users[name]
	if !ok {
		return hub.Errorf(hub.NotFound, "user %q not found", name)
	}
	u.PasswordHash = hash
	t.st.users[name] = u
	return nil
}

func (t *tx) DeleteUser(name string) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, ok := t.st.users[name]; !ok {
		return hub.Errorf(hub.NotFound, "user %q not found", name)
	}
	delete(t.st.users, name)
	t.forget(func(k userWorkspace) bool { return k.user == name })
	t.forgetPushDevices(func(d hub.PushDevice) bool { return d.User == name })
	_, err := t.DeleteDeviceSessionsOfUser(name)
	return err
}

func (t *tx) CreateDeviceSession(s hub.DeviceSession) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, ok := t.st.users[s.User]; !ok {
		return hub.Errorf(hub.NotFound, "user %q not found", s.User)
	}
	if _, ok := t.st.sessions[s.Digest]; ok {
		return hub.Errorf(hub.Conflict, "session already exists")
	}
	for _, o := range t.st.sessions {
		if o.Handle == s.Handle {
			return hub.Errorf(hub.Conflict, "session already exists")
		}
	}
	t.st.sessions[s.Digest] = s
	return nil
}

func (t *tx) DeviceSessionByDigest(d hub.DeviceSessionDigest) (hub.DeviceSession, error) {
	s, ok := t.st.sessions[d]
	if !ok {
		return hub.DeviceSession{}, hub.Errorf(hub.NotFound, "session not found")
	}
	return s, nil
}

func (t *tx) ActiveDeviceSessions(now time.Time) ([]hub.DeviceSession, error) {
	var ss []hub.DeviceSession
	for _, s := range t.st.sessions {
		if s.Active(now) {
			ss = append(ss, s)
		}
	}
	return ss, nil
}

func (t *tx) DeviceSessionsOfUser(name string) ([]hub.DeviceSession, error) {
	var ss []hub.DeviceSession
	for _, s := range t.st.sessions {
		if s.User == name {
			ss = append(ss, s)
		}
	}
	sort.Slice(ss, func(i, j int) bool {
		if !ss[i].IssuedAt.Equal(ss[j].IssuedAt) {
			return ss[i].IssuedAt.After(ss[j].IssuedAt)
		}
		return ss[i].Handle < ss[j].Handle
	})
	return ss, nil
}

func (t *tx) RevokeDeviceSession(d hub.DeviceSessionDigest, at time.Time) error {
	if err := t.write(); err != nil {
		return err
	}
	s, ok := t.st.sessions[d]
	if !ok {
		return hub.Errorf(hub.NotFound, "session not found")
	}
	if s.RevokedAt.IsZero() {
		s.RevokedAt = at
		t.st.sessions[d] = s
	}
	return nil
}

func (t *tx) DeleteDeviceSessionsOfUser(name string) (int, error) {
	if err := t.write(); err != nil {
		return 0, err
	}
	n := 0
	for d, s := range t.st.sessions {
		if s.User == name {
			delete(t.st.sessions, d)
			n++
		}
	}
	return n, nil
}

func (t *tx) DeleteExpiredDeviceSessions(now time.Time) (int, error) {
	if err := t.write(); err != nil {
		return 0, err
	}
	n := 0
	for d, s := range t.st.sessions {
		if !now.Before(s.ExpiresAt) {
			delete(t.st.sessions, d)
			n++
		}
	}
	return n, nil
}
