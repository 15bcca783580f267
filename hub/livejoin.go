package hub

import (
	"bytes"
	"encoding/json"
)

// This file holds what each topic owes a subscriber that joins (the
// replay or snapshot before `ready`) and how each topic's frames reach the
// subscribers already attached. Everything here runs under liveBroker.mu,
// so a joiner is registered in the same critical section that computes
// what it is owed, and a frame is either part of that or fanned out to it,
// never both, never neither.

// maxConversationLog bounds the bytes of conversation events an upstream
// keeps for replay.
const maxConversationLog = 256 << 10

// followLocked attaches a to the upstream of its topic and key, opening
// the upstream if it is new. b.mu is held.
func (b *liveBroker) followLocked(a *attachment) {
	k := upKey{ws: a.s.ws, topic: a.sub.Topic, key: a.sub.identity().Key}
	fresh := b.ups[k] == nil
	u := b.upstreamFor(k)
	a.up = u
	u.subs[a] = struct{}{}
	switch {
	case u.state == upLive:
		b.joinLiveLocked(u, a)
	case u.state == upOpening:
		a.pending = true
	case fresh:
		a.pending = true
		if k.topic == TopicConversation {
			u.head = a.cursor // the session resumes from the first subscriber's cursor
		}
		b.openLocked(u)
	default:
		b.joinFailedLocked(u, a)
	}
}

// joinLiveLocked writes what a is owed by the live upstream u, then
// `ready`:
//   - document: the materialized snapshot unless a's cursor is the head;
//   - inventory: the latest tick unless a's cursor is the head (one tick
//     stands for every one missed);
//   - conversation: the logged events after a's cursor; a cursor that is
//     neither the head nor in the log cannot be replayed, so a gets
//     `resync` and is detached.
//
// b.mu is held.
func (b *liveBroker) joinLiveLocked(u *upstream, a *attachment) {
	a.pending, a.told = false, false
	var owed []Envelope
	switch u.k.topic {
	case TopicDocument:
		if a.cursor != u.head {
			if snap := u.doc.snapshot(); snap != nil {
				e := a.envelope(EventData, u.head, snap)
				e.coalesce = true
				owed = append(owed, e)
			}
		}
	case TopicInventory:
		if a.cursor != u.head && u.latest != nil {
			owed = append(owed, a.envelope(EventData, u.head, u.latest))
		}
	case TopicConversation:
		if a.cursor != "" && a.cursor != u.head {
			events, ok := u.conv.after(a.cursor)
			if !ok {
				b.resyncLocked(a, u.head, nil)
				return
			}
			for _, ev := range events {
				owed = append(owed, a.envelope(EventData, ev.cursor, ev.data))
			}
		}
	}
	a.cursor = u.head
	owed = append(owed, a.envelope(EventReady, u.head, nil))
	b.deliverLocked(a, owed...)
}

// frameLocked takes one frame of u's feed. b.mu is held.
func (b *liveBroker) frameLocked(u *upstream, fr FeedFrame) {
	switch u.k.topic {
	case TopicDocument:
		if fr.Kind != FrameData {
			return
		}
		switch u.doc.apply(fr.Data) {
		case docIgnored:
			return
		case docResync:
			// The Hub's state and the session's disagree: start over from
			// a fresh snapshot rather than relay a gap.
			b.failLocked(u, u.gen, Errorf(Unavailable, "a document update could not be applied"))
			return
		}
		u.advance()
		if u.state != upLive {
			b.liveLocked(u) // the first snapshot: the joiners get it materialized
			return
		}
		b.fanOutLocked(u, fr.Data, u.head, isSnapshot(fr.Data))
	case TopicInventory:
		if fr.Kind != FrameData {
			return
		}
		u.latest = fr.Data
		u.advance()
		if u.state != upLive {
			b.liveLocked(u)
			return
		}
		b.fanOutLocked(u, fr.Data, u.head, false)
	case TopicConversation:
		switch fr.Kind {
		case FrameOpen:
			if u.head == "" {
				u.head = fr.Cursor
			}
		case FrameData:
			u.conv.add(fr.Cursor, fr.Data)
			u.head = fr.Cursor
			b.fanOutLocked(u, fr.Data, fr.Cursor, false)
		case FrameResync:
			// The session rewrote the conversation: nobody can continue
			// from what they hold, and the upstream is done.
			for a := range u.subs {
				b.resyncLocked(a, u.head, fr.Data)
			}
			b.closeUpstreamLocked(u)
		}
	}
}

// fanOutLocked sends one data frame to every attached subscriber of u.
// b.mu is held.
func (b *liveBroker) fanOutLocked(u *upstream, data []byte, cursor string, coalesce bool) {
	for a := range u.subs {
		if a.pending {
			continue
		}
		e := a.envelope(EventData, cursor, data)
		e.coalesce = coalesce
		a.cursor = cursor
		b.deliverLocked(a, e)
	}
}

// resyncLocked sends a `resync` (carrying data, for a conversation, when
// the session gave one) and detaches a: it stays out of its stream's
// subscriptions until the client adds it again. b.mu is held.
func (b *liveBroker) resyncLocked(a *attachment, cursor string, data []byte) {
	b.deliverLocked(a, a.envelope(EventResync, cursor, data))
	s := a.s
	s.mu.Lock()
	if id := a.sub.identity(); s.subs[id] == a {
		delete(s.subs, id)
	}
	s.mu.Unlock()
	b.unfollowLocked(a)
}

// isSnapshot reports whether a DocumentUpdate is a snapshot. The child
// writes `kind` first, so the start of the object usually tells without
// scanning a snapshot of megabytes; otherwise the object is decoded.
func isSnapshot(update []byte) bool {
	head := update[:min(len(update), 64)]
	switch {
	case bytes.Contains(head, []byte(`"kind":"snapshot"`)):
		return true
	case bytes.Contains(head, []byte(`"kind":"patch"`)):
		return false
	}
	var u struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(update, &u) == nil && u.Kind == "snapshot"
}

// convEntry is one logged conversation event.
type convEntry struct {
	cursor string
	data   []byte
}

// convLog keeps the latest conversation events, at most
// maxConversationLog bytes of them (always the newest one).
type convLog struct {
	entries []convEntry
	bytes   int
}

func (l *convLog) add(cursor string, data []byte) {
	l.entries = append(l.entries, convEntry{cursor, data})
	l.bytes += len(cursor) + len(data)
	drop := 0
	for l.bytes > maxConversationLog && drop < len(l.entries)-1 {
		l.bytes -= len(l.entries[drop].cursor) + len(l.entries[drop].data)
		drop++
	}
	if drop > 0 {
		l.entries = append(l.entries[:0:0], l.entries[drop:]...)
	}
}

// after returns the events logged after the one with cursor, and false
// when no logged event has that cursor.
func (l *convLog) after(cursor string) ([]convEntry, bool) {
	for i, e := range l.entries {
		if e.cursor == cursor {
			return l.entries[i+1:], true
		}
	}
	return nil, false
}
