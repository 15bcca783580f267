package chat

import (
	"fmt"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Held messages persist with the conversation list (chat.ConversationStore)
// so that a crash of the child loses none and sends none twice:
//
//   - a held message is saved before its send is answered: a client told
//     "held" may count on it;
//   - its delivery is saved (the queue without it, and the message as the
//     one Delivering) before it reaches the agent: a crash can never send
//     it twice;
//   - after a crash the held messages are delivered in order, each once;
//     the message whose turn ran is not sent again (the agent may have
//     it) and a notice says its turn was interrupted, so the user can see
//     whether the replayed history holds it and send it again if not.
//
// The guarantee is thus exactly once for a message held at the crash, and
// at most once, told, for the message being delivered: the agent gives no
// acknowledgement that would tell a message it received from one it lost.

// heldQueue is a conversation's held messages, in the order they were
// sent.
type heldQueue struct {
	msgs   []*heldMessage
	bytes  int // of held text
	images int // bytes of held images
}

// heldMessage is a message waiting for the turn before it to end, or
// being delivered.
type heldMessage struct {
	QueuedMessage
	images []AgentImage
	keys   []string // the store's names of images' bytes (hub.HeldImage.Key)
}

// hold appends m, or refuses it with RateLimited when the queue holds 20
// messages, or m would take the held text past 256 KiB or the held
// images past 64 MiB.
func (q *heldQueue) hold(m *heldMessage) error {
	if len(q.msgs) >= MaxHeldMessages {
		return hub.Errorf(hub.RateLimited, "%d messages are already held; wait for the agent or remove one", MaxHeldMessages)
	}
	if q.bytes+len(m.Text) > MaxHeldTextBytes {
		return hub.Errorf(hub.RateLimited, "held messages would exceed 256 KiB of text; wait for the agent or remove one")
	}
	if q.images+m.imageBytes() > MaxHeldImageBytes {
		return hub.Errorf(hub.RateLimited, "held messages would exceed 64 MiB of images; wait for the agent or remove one")
	}
	q.msgs = append(q.msgs, m)
	q.bytes += len(m.Text)
	q.images += m.imageBytes()
	return nil
}

// imageBytes is the size of m's images.
func (m *heldMessage) imageBytes() int {
	n := 0
	for _, img := range m.images {
		n += len(img.Data)
	}
	return n
}

// remove takes out the message with id and returns it; nil when it is
// not held.
func (q *heldQueue) remove(id string) *heldMessage {
	for i, m := range q.msgs {
		if m.ID == id {
			q.msgs = append(q.msgs[:i:i], q.msgs[i+1:]...)
			q.bytes -= len(m.Text)
			q.images -= m.imageBytes()
			return m
		}
	}
	return nil
}

// list restates the queue, never nil.
func (q *heldQueue) list() []QueuedMessage {
	out := make([]QueuedMessage, 0, len(q.msgs))
	for _, m := range q.msgs {
		out = append(out, m.QueuedMessage)
	}
	return out
}

// size is what m holds: its text and images.
func (m *heldMessage) size() int { return len(m.Text) + m.imageBytes() }

// hold holds hm in c's queue, within the conversation's bounds (heldQueue)
// and the workspace's (MaxWorkspaceHeldBytes); RateLimited past them.
// m.mu held.
func (m *Manager) hold(c *conversation, hm *heldMessage) error {
	if m.held+hm.size() > MaxWorkspaceHeldBytes {
		return hub.Errorf(hub.RateLimited, "the workspace's held messages would exceed 128 MiB; wait for the agents or remove one")
	}
	if err := c.queue.hold(hm); err != nil {
		return err
	}
	m.held += hm.size()
	return nil
}

// unhold takes hm out of the workspace's count (it was removed,
// delivered, or its conversation closed). m.mu held.
func (m *Manager) unhold(hm *heldMessage) { m.held -= hm.size() }

// removeHeld takes the message id out of c's queue; nil when it is not
// held. m.mu held.
func (m *Manager) removeHeld(c *conversation, id string) *heldMessage {
	hm := c.queue.remove(id)
	if hm != nil {
		m.unhold(hm)
	}
	return hm
}

// nextHeld takes the first message out of c's queue; nil when none is
// held. m.mu held.
func (m *Manager) nextHeld(c *conversation) *heldMessage {
	if len(c.queue.msgs) == 0 {
		return nil
	}
	return m.removeHeld(c, c.queue.msgs[0].ID)
}

// restoreHeld puts back a message held before a restart, without the
// bounds' refusals (it was within them when it was held). m.mu held.
func (m *Manager) restoreHeld(c *conversation, hm *heldMessage) {
	c.queue.msgs = append(c.queue.msgs, hm)
	c.queue.bytes += len(hm.Text)
	c.queue.images += hm.imageBytes()
	m.held += hm.size()
}

// heldFromRecord is the held message a record kept.
func heldFromRecord(r HeldMessageRecord) *heldMessage {
	hm := &heldMessage{QueuedMessage: QueuedMessage{ID: r.ID, Text: r.Text, QueuedAt: ms(r.QueuedAt), RequestID: r.RequestID}}
	for _, img := range r.Images {
		hm.images = append(hm.images, AgentImage{MimeType: img.MimeType, Data: img.Data})
		hm.keys = append(hm.keys, img.Key)
		hm.Attachments = append(hm.Attachments, AttachmentInfo{MimeType: img.MimeType, Size: len(img.Data), Name: img.Name})
	}
	return hm
}

// record is what the store keeps of a held message; withImages false
// leaves the images out (a message being delivered).
func (q QueuedMessage) record(hm *heldMessage, withImages bool) HeldMessageRecord {
	r := HeldMessageRecord{ID: q.ID, Text: q.Text, QueuedAt: time.UnixMilli(q.QueuedAt).UTC(), RequestID: q.RequestID}
	if withImages && hm != nil {
		for i, img := range hm.images {
			r.Images = append(r.Images, HeldImage{Key: hm.keys[i], MimeType: img.MimeType, Name: q.Attachments[i].Name,
				Data: img.Data})
		}
	}
	return r
}

// heldRecords is what the store keeps of c's queue, its delivery and its
// remembered sends. m.mu held.
func (c *conversation) heldRecords(r *ConversationRecord) {
	for _, hm := range c.queue.msgs {
		r.Held = append(r.Held, hm.QueuedMessage.record(hm, true))
	}
	switch {
	case c.delivering != nil:
		d := c.delivering.record(nil, false)
		r.Delivering = &d
	case c.interrupted != nil:
		d := *c.interrupted
		r.Delivering = &d
	}
	for _, id := range c.sentList {
		res := c.sent[id]
		r.Sent = append(r.Sent, SentRecord{RequestID: id, MessageID: res.MessageID, Held: res.Held})
	}
}

// restore takes back what a record kept of c's queue. m.mu held.
func (m *Manager) restore(c *conversation, r ConversationRecord) {
	for _, h := range r.Held {
		m.restoreHeld(c, heldFromRecord(h))
	}
	if r.Delivering != nil {
		d := *r.Delivering
		d.Images = nil
		c.interrupted = &d
	}
	for _, s := range r.Sent {
		if _, dup := c.sent[s.RequestID]; s.RequestID != "" && !dup && len(c.sentList) < maxRememberedRequest {
			c.sent[s.RequestID] = SendResult{MessageID: s.MessageID, Held: s.Held}
			c.sentList = append(c.sentList, s.RequestID)
		}
	}
}

// tellInterrupted says, once the conversation's history is back, that
// the turn of the message being delivered when the child stopped was
// interrupted. m.mu held.
func (m *Manager) tellInterrupted(c *conversation) {
	d := c.interrupted
	if d == nil || c.closed {
		return
	}
	c.interrupted = nil
	m.version++ // the record forgets it at the next save
	what := "your message"
	if t := deriveTitle(d.Text); t != "" {
		what = fmt.Sprintf("your message %q", t)
	}
	m.notice(c, "warning", "", "The workspace session stopped during the turn of "+what+
		": the agent may not have received it, or not finished its answer. Send it again if it is missing above.")
}
