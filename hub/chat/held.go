package chat

import "github.com/wharfhub/wharf/hub"

// heldQueue is a conversation's held messages, in the order they were
// sent.
type heldQueue struct {
	msgs   []*heldMessage
	bytes  int // of held text
	images int // bytes of held images
}

// heldMessage is a message waiting for the turn before it to end.
type heldMessage struct {
	QueuedMessage
	images []hub.AgentImage
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
