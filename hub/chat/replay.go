package chat

import (
	"encoding/json"

	"github.com/wharfhub/wharf/hub"
)

// MaxReplayBytes bounds the serialized events one conversation keeps for
// replay (256 KiB, as the earlier child did). The newest event is always
// kept, however large.
const MaxReplayBytes = 256 << 10

// Frame is one logged ChatEvent: its cursor's text and its JSON.
type Frame struct {
	Cursor string
	Data   []byte
}

// replayLog is one conversation's events of one generation: sequences
// increase by one per event from 1, and the log keeps the newest of them
// within MaxReplayBytes.
type replayLog struct {
	generation string
	head       int64 // the last event's sequence; 0 before the first
	entries    []Frame
	first      int64 // the sequence of entries[0]
	bytes      int
}

func newReplayLog(generation string) *replayLog {
	return &replayLog{generation: generation, first: 1}
}

// headCursor is the cursor of the last event (sequence 0 before any).
func (l *replayLog) headCursor() string {
	return Cursor{Generation: l.generation, Sequence: l.head}.String()
}

// append stamps ev with the next sequence, logs its JSON and returns it.
func (l *replayLog) append(ev *Event) Frame {
	l.head++
	ev.Generation, ev.Sequence = l.generation, l.head
	data, err := json.Marshal(ev)
	if err != nil {
		// Every field is a plain value: this cannot happen short of a bug.
		panic("chat: event does not encode: " + err.Error())
	}
	f := Frame{Cursor: Cursor{Generation: l.generation, Sequence: l.head}.String(), Data: data}
	l.entries = append(l.entries, f)
	l.bytes += len(f.Data)
	drop := 0
	for l.bytes > MaxReplayBytes && drop < len(l.entries)-1 {
		l.bytes -= len(l.entries[drop].Data)
		drop++
	}
	if drop > 0 {
		l.entries = append(l.entries[:0:0], l.entries[drop:]...)
		l.first += int64(drop)
	}
	return f
}

// after returns the logged events that follow the cursor text, or the
// resync event that answers a cursor which cannot be resumed: one not
// ours (invalid-cursor), of another generation (generation-changed), or
// older than the oldest event kept, or newer than the head
// (retention-gap). The resync carries the head's generation and sequence.
func (l *replayLog) after(cursor, conversationID string) ([]Frame, *Event) {
	resync := func(reason string) *Event {
		return &Event{Generation: l.generation, Sequence: l.head, ConversationID: conversationID,
			Type: EventResync, Reason: reason}
	}
	c, err := ParseCursor(cursor)
	switch {
	case err != nil:
		return nil, resync(hub.ResyncInvalidCursor)
	case c.Generation != l.generation:
		return nil, resync(hub.ResyncGenerationChanged)
	case c.Sequence > l.head || c.Sequence < l.first-1:
		return nil, resync(hub.ResyncRetentionGap)
	}
	return l.entries[c.Sequence-(l.first-1):], nil
}
