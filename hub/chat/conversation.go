package chat

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// conversation is one conversation's state. Every field is guarded by
// Manager.mu.
type conversation struct {
	id, agentID string
	sessionID   string // the agent session holding its history
	title       string
	titleSet    bool // the user (or the agent) named it: no title is derived any more
	createdAt   time.Time
	updatedAt   time.Time
	status      Status
	config      Configuration

	items    []*Item
	byID     map[string]*Item
	nextID   int // numbers items this generation
	log      *replayLog
	changed  notifier
	bytes    int  // the items' sizes together (bounds.go)
	trimming bool // trim runs: its notice must not trim again

	queue       heldQueue
	delivering  *QueuedMessage        // the message whose turn runs, until it ends (held.go)
	interrupted *HeldMessageRecord    // the message whose turn a crash interrupted, until a notice says so
	sent        map[string]SendResult // by request id, for retried sends
	sentList    []string              // the request ids in sent, oldest first

	pending         map[string]*request // permission requests and questions awaiting an answer, by our id
	asked           map[askKey]string   // our ids of the pending requests, by the connection's own
	refusedRequests bool                // requests past MaxPendingRequests were refused, and a notice said so
	text            *openText           // the message being streamed, if any
	turn            *turn               // the turn running, if any
	failure         *turnFailure        // the last turn's failure, while its agent's exit may still explain it

	conn      AgentConnection // the connection the session is open on; nil: to reopen
	loading   bool            // the session is being reopened in the background (touchLocked)
	opening   chan struct{}   // closed when the reopen in flight ends (openSession)
	suppress  bool            // drop the agent's updates: a replay of what the items already hold
	replaying bool            // the agent replays the session's history into the items
	noticed   bool            // the failure to reopen was told once this generation
	closed    bool
	turnCount int
}

// openText is the assistant message, reasoning or replayed user message
// that chunks of the same role extend. Its text grows in buf, so that a
// message of n bytes costs O(n) however many chunks bring it (the item's
// field is the builder's string, which shares its bytes); past room
// bytes the rest is cut, counted in cut, and said in a notice.
type openText struct {
	role, messageID string
	item            *Item
	buf             strings.Builder
	room            int  // the bytes of text the message may hold (MaxMessageItemBytes)
	cut, told       int  // bytes cut, and the figure the notice last said
	dirty           bool // a replayed user message grew since its last upsert
}

// add appends what fits of s to the message's text and returns it.
func (t *openText) add(s string) string {
	keep := utf8Prefix(s, t.room-t.buf.Len())
	t.cut += len(s) - len(keep)
	if keep == "" {
		return ""
	}
	t.buf.WriteString(keep)
	if t.role == "user" {
		t.item.Text = t.buf.String()
	} else {
		*t.item.Markdown = t.buf.String()
	}
	return keep
}

// turn is one turn in flight: from the delivery of a message to the end
// of its Prompt.
type turn struct {
	n         int
	id        string // 128 random bits: the turn's identity, never reused (notices.go)
	cancel    context.CancelFunc
	cancelled bool      // the user asked to cancel
	grace     hub.Timer // forces the end when the agent ignores the cancel
	epoch     uint64    // the agent's login epoch when the turn began
}

func (m *Manager) newConversation(id, agentID, sessionID string, created time.Time) *conversation {
	return &conversation{id: id, agentID: agentID, sessionID: sessionID, createdAt: created, updatedAt: created,
		status: StatusIdle, byID: map[string]*Item{}, log: newReplayLog(m.newGeneration()),
		sent: map[string]SendResult{}, pending: map[string]*request{}, asked: map[askKey]string{}}
}

// emit logs ev for c and wakes its readers. m.mu held.
func (m *Manager) emit(c *conversation, ev *Event) {
	ev.ConversationID = c.id
	c.log.append(ev)
	c.changed.fire()
}

// now is the clock's time.
func (m *Manager) now() time.Time { return m.cfg.Clock.Now() }

// ms is t in epoch milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// newItem adds an item of kind with a fresh id built from prefix, or the
// given id when it is not empty; it is not emitted yet.
func (m *Manager) newItem(c *conversation, kind, id string) *Item {
	if id == "" {
		c.nextID++
		id = kind + ":" + strconv.Itoa(c.nextID)
	}
	it := &Item{ID: id, Kind: kind, CreatedAt: ms(m.now())}
	c.items = append(c.items, it)
	c.byID[id] = it
	return it
}

// upsert bounds the item, emits it as it stands (then the notice of what
// was cut, if anything was) and keeps the conversation within its bound.
func (m *Manager) upsert(c *conversation, it *Item) {
	cut := m.account(c, it)
	m.emit(c, &Event{Type: EventItemUpsert, Item: it})
	m.cutNotice(c, it, cut)
	m.trim(c)
}

// notice adds and emits a notice item, and returns it.
func (m *Manager) notice(c *conversation, level, code, message string) *Item {
	m.closeText(c)
	it := m.newItem(c, KindNotice, "")
	it.Level, it.Code, it.Message = level, code, message
	m.upsert(c, it)
	return it
}

// closeText ends the streamed message: the next chunk starts a new item.
// What the message still owes its readers goes out now: a replayed user
// message's text, the final figure of a cut. m.mu held.
func (m *Manager) closeText(c *conversation) {
	t := c.text
	if t == nil {
		return
	}
	c.text = nil
	if t.buf.Cap() > t.buf.Len()+t.buf.Len()/4+4096 {
		// The builder doubled past the text: keep the text alone.
		text := strings.Clone(t.buf.String())
		if t.role == "user" {
			t.item.Text = text
		} else {
			*t.item.Markdown = text
		}
	}
	if c.closed {
		return
	}
	if t.dirty {
		m.upsert(c, t.item)
	}
	if t.cut > t.told {
		m.cutNotice(c, t.item, t.cut)
	}
}

// setStatus moves c to status, telling readers of the conversation and
// of the inventory. m.mu held.
func (m *Manager) setStatus(c *conversation, status Status, message string) {
	if c.status == status && message == "" {
		return
	}
	c.status = status
	m.emit(c, &Event{Type: EventStatus, Status: status, Message: message})
	m.inv.fire()
}

// touched marks c updated now and restates its summary.
func (m *Manager) touched(c *conversation) {
	c.updatedAt = m.now()
	m.updated(c)
}

// updated restates c's summary to its readers and the inventory's.
func (m *Manager) updated(c *conversation) {
	s := m.summary(c)
	m.emit(c, &Event{Type: EventUpdated, Conversation: &s})
	m.inv.fire()
	m.version++
}

// summary is c's ConversationSummary.
func (m *Manager) summary(c *conversation) Summary {
	return Summary{ID: c.id, Title: c.title, CreatedAt: ms(c.createdAt), UpdatedAt: ms(c.updatedAt), Status: c.status,
		Agent: AgentName{ID: c.agentID, Name: m.agentName(c.agentID)}}
}

// persist stores the inventory if it changed since the last save. It is
// called without m.mu; saves run one at a time, newest state last. A
// failed save is logged and returned; the change stays in memory and the
// next persist tries again.
func (m *Manager) persist() error {
	m.saveMu.Lock()
	defer m.saveMu.Unlock()
	m.mu.Lock()
	version := m.version
	records := make([]ConversationRecord, 0, len(m.convs))
	for _, c := range m.convs {
		r := ConversationRecord{ID: c.id, AgentID: c.agentID, SessionID: c.sessionID,
			Title: c.title, CreatedAt: c.createdAt, UpdatedAt: c.updatedAt, Model: c.config.Model, Mode: c.config.Mode}
		c.heldRecords(&r)
		records = append(records, r)
	}
	m.mu.Unlock()
	if version == m.saved {
		return nil
	}
	if err := m.cfg.Store.SaveConversations(records); err != nil {
		m.log.Error("the conversation inventory could not be saved", "err", err)
		return hub.Wrap(hub.Internal, err, "the conversation list could not be saved; it is kept until the next change saves it")
	}
	m.saved = version
	return nil
}
