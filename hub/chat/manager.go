package chat

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// Config says what a Manager runs over. Runtime, Store and Dir are
// required.
type Config struct {
	// Runtime starts the agents.
	Runtime AgentRuntime
	// Store keeps the inventory across restarts of the child.
	Store ConversationStore
	// Dir is the workspace folder, absolute: where every session runs.
	Dir string
	// Clock is the only source of time; default hub.SystemClock.
	Clock hub.Clock
	// Logger receives the core's logs: never a message, an item or an
	// agent's output. Default discards.
	Logger *slog.Logger
	// Rand makes generations and request ids; default crypto/rand.
	Rand io.Reader
	// Bounds bound what agents' output holds; zero fields take the
	// constants of bounds.go.
	Bounds Bounds
}

// Manager holds the conversations of one workspace. Its methods are safe
// for concurrent use; errors are *hub.Error with the contract's kinds.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	bounds Bounds

	mu       sync.Mutex
	convs    map[string]*conversation
	agents   map[string]*agentState
	leases   map[AgentConnection]int  // calls in flight on each connection (connection, release)
	retired  map[AgentConnection]bool // connections a login change retired; true once being closed (login.go)
	names    map[string]string        // agent names by id, from the runtime at New
	inv      notifier                 // fires when the inventory or a catalog changes
	act      notifier                 // fires when the activity changes
	activity Activity
	notices  *noticeLog      // the notification feed (notices.go)
	held     int             // bytes of the held messages of every conversation
	ctx      context.Context // ends at Close; every turn derives from it
	stop     context.CancelFunc
	closed   bool

	saveMu  sync.Mutex // orders SaveConversations calls
	version uint64     // of the inventory, under mu
	saved   uint64     // the version last saved, under saveMu

	work sync.WaitGroup // turns and loads in flight
}

// Activity is the session's activity facts: whether an agent works (a
// turn runs) or awaits an answer (a permission request or question).
type Activity struct {
	Working  bool `json:"working"`
	Awaiting bool `json:"awaiting"`
}

// New returns a Manager over cfg, with the conversations the store kept.
// Each starts a new generation, idle, and reopens its agent session when
// it is first used, or at once when it holds messages, which are then
// delivered (held.go).
func New(cfg Config) (*Manager, error) {
	if cfg.Runtime == nil || cfg.Store == nil || cfg.Dir == "" {
		return nil, hub.Errorf(hub.Internal, "chat: runtime, store and folder are required")
	}
	if cfg.Clock == nil {
		cfg.Clock = hub.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, bounds: cfg.Bounds.withDefaults(), convs: map[string]*conversation{},
		agents: map[string]*agentState{}, leases: map[AgentConnection]int{}, retired: map[AgentConnection]bool{},
		names: map[string]string{}}
	for _, d := range cfg.Runtime.Agents() {
		m.names[d.ID] = d.Name
	}
	m.ctx, m.stop = context.WithCancel(context.Background())
	m.notices = newNoticeLog(m.token())
	records, err := cfg.Store.LoadConversations()
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the conversation inventory could not be read")
	}
	for _, r := range records {
		if r.ID == "" || r.AgentID == "" || m.convs[r.ID] != nil {
			continue
		}
		c := m.newConversation(r.ID, r.AgentID, r.SessionID, r.CreatedAt)
		c.title, c.titleSet, c.updatedAt = r.Title, r.Title != "", r.UpdatedAt
		c.config = Configuration{Model: r.Model, Mode: r.Mode}
		m.restore(c, r)
		m.convs[r.ID] = c
	}
	// Messages held before a restart go out as they would have: the
	// session reopens, then the first is delivered.
	m.mu.Lock()
	for _, c := range m.convs {
		if len(c.queue.msgs) > 0 {
			m.touchLocked(c)
		}
	}
	m.mu.Unlock()
	return m, nil
}

// Close ends every turn and agent and waits for them. The inventory stays
// stored; the Manager answers nothing afterwards.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.stop()
	var conns []AgentConnection
	for _, a := range m.agents {
		if a.conn != nil {
			conns = append(conns, a.conn)
		}
	}
	for conn, closing := range m.retired {
		if !closing { // those being closed are awaited with the work
			m.retired[conn] = true
			conns = append(conns, conn)
		}
	}
	for _, c := range m.convs {
		c.changed.fire()
	}
	m.inv.fire()
	m.act.fire()
	m.notices.changed.fire()
	m.mu.Unlock()
	for _, conn := range conns {
		if err := conn.Close(); err != nil {
			m.log.Warn("agent did not close cleanly", "err", err)
		}
	}
	m.work.Wait()
}

// newGeneration returns a fresh generation name.
func (m *Manager) newGeneration() string {
	var b [8]byte
	if _, err := io.ReadFull(m.cfg.Rand, b[:]); err != nil {
		panic("chat: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// token returns 128 random bits in hex: the ids the core names (requests,
// messages, held images), never issued twice and unguessable.
func (m *Manager) token() string {
	var b [16]byte
	if _, err := io.ReadFull(m.cfg.Rand, b[:]); err != nil {
		panic("chat: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// conv returns the open conversation id; NotFound otherwise. m.mu held.
func (m *Manager) conv(id string) (*conversation, error) {
	if m.closed {
		return nil, hub.Errorf(hub.Unavailable, "the workspace session is stopping")
	}
	c := m.convs[id]
	if c == nil {
		return nil, hub.Errorf(hub.NotFound, "unknown conversation")
	}
	return c, nil
}

// List returns every conversation's summary, the most recently updated
// first.
func (m *Manager) List() []Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Summary, 0, len(m.convs))
	for _, c := range m.convs {
		out = append(out, m.summary(c))
	}
	slices.SortFunc(out, func(a, b Summary) int {
		if a.UpdatedAt != b.UpdatedAt {
			return cmp.Compare(b.UpdatedAt, a.UpdatedAt)
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// Snapshot is one conversation as it stands after the event at Cursor:
// a client shows it, then follows the conversation topic from Cursor.
type Snapshot struct {
	Conversation  Summary           `json:"conversation"`
	Configuration Configuration     `json:"configuration"`
	Items         []json.RawMessage `json:"items"`
	Queued        []QueuedMessage   `json:"queued"`
	Cursor        string            `json:"cursor"`
}

// Snapshot returns the conversation id as it stands, and starts reopening
// its agent session if this child has not yet (the history then arrives
// as events after the snapshot's cursor).
func (m *Manager) Snapshot(id string) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.conv(id)
	if err != nil {
		return Snapshot{}, err
	}
	m.touchLocked(c)
	s := Snapshot{Conversation: m.summary(c), Configuration: c.config, Items: make([]json.RawMessage, 0, len(c.items)),
		Queued: c.queue.list(), Cursor: c.log.headCursor()}
	for _, it := range c.items {
		b, err := json.Marshal(it)
		if err != nil {
			panic("chat: item does not encode: " + err.Error())
		}
		s.Items = append(s.Items, b)
	}
	return s, nil
}

// Batch is what a reader of one conversation gets next (Events).
type Batch struct {
	// Frames are the events after the cursor, in order.
	Frames []Frame
	// Resync, when set, is the ChatResyncEvent (JSON) answering a cursor
	// that cannot be resumed; the reader sends it and ends.
	Resync []byte
	// Wait is closed once more may follow.
	Wait <-chan struct{}
	// Ended reports the conversation closed (or the Manager): the reader
	// ends after Frames.
	Ended bool
}

// Head returns the cursor of the conversation's last event, where a
// reader without a cursor starts; it also starts reopening the agent
// session, as Snapshot does.
func (m *Manager) Head(id string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.conv(id)
	if err != nil {
		return "", err
	}
	m.touchLocked(c)
	return c.log.headCursor(), nil
}

// Events returns what follows cursor in the conversation id (see Batch).
// A cursor this child cannot resume gets a resync: invalid-cursor,
// generation-changed (another child's, or an earlier generation's) or
// retention-gap (older than the 256 KiB kept, or ahead of the head).
func (m *Manager) Events(id, cursor string) (Batch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.convs[id]
	if c == nil {
		if m.closed {
			return Batch{Ended: true}, nil
		}
		return Batch{}, hub.Errorf(hub.NotFound, "unknown conversation")
	}
	frames, resync := c.log.after(cursor, id)
	if resync != nil {
		data, _ := json.Marshal(resync)
		return Batch{Resync: data}, nil
	}
	return Batch{Frames: frames, Wait: c.changed.wait(), Ended: m.closed}, nil
}

// Inventory returns the catalog revision of every agent (the inventory
// event's `catalogs`) and a channel closed once the inventory or a catalog
// changes.
func (m *Manager) Inventory() (map[string]string, <-chan struct{}) {
	descs := m.cfg.Runtime.Agents()
	m.mu.Lock()
	defer m.mu.Unlock()
	catalogs := map[string]string{}
	for _, a := range m.agentEntriesLocked(descs) {
		catalogs[a.ID] = a.CatalogRevision
	}
	return catalogs, m.inv.wait()
}

// Activity returns the session's activity and a channel closed once it
// changes.
func (m *Manager) Activity() (Activity, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.activity, m.act.wait()
}

// activityChangedLocked recomputes the activity and tells its readers
// when it changed. m.mu held.
func (m *Manager) activityChangedLocked() {
	var a Activity
	for _, c := range m.convs {
		a.Working = a.Working || c.turn != nil
		a.Awaiting = a.Awaiting || len(c.pending) > 0
	}
	if a != m.activity {
		m.activity = a
		m.act.fire()
	}
}

// notifier wakes the readers waiting on it: wait returns a channel that
// fire closes (and replaces). The zero value is ready; it is used under
// the Manager's lock.
type notifier struct{ ch chan struct{} }

func (n *notifier) wait() <-chan struct{} {
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) fire() {
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}
