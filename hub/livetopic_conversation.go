package hub

import "time"

// The conversation topic: one conversation's ordered events (the key is
// its id). Cursors are the session's own, opaque to the Hub, which only
// compares them for equality: its upstream keeps a byte-bounded replay log
// of the latest events, so a subscriber resuming from a logged cursor gets
// what followed it. Any other cursor may be ahead of what the upstream
// relayed (a client took a snapshot from the session while its events
// were on their way): the joiner is `ready` at once and its events are
// skipped until one carries its cursor; when none does within
// conversationAheadWait, the cursor was not one to resume from and the
// joiner gets `resync`. A resync from the session reaches every
// subscriber and releases the upstream.

// maxConversationLog bounds the bytes of conversation events an upstream
// keeps for replay.
const maxConversationLog = 256 << 10

// conversationAheadWait bounds how long a joiner's unknown cursor may
// wait to be relayed before it gets `resync`; a session relays an event
// within milliseconds of logging it.
const conversationAheadWait = 3 * time.Second

type conversationTopic struct{ feedTopic }

func newConversationTopic(b *liveBroker) *conversationTopic {
	return &conversationTopic{feedTopic{b: b, topic: TopicConversation, newCodec: func() feedCodec { return &conversationFeed{} }}}
}

func (conversationTopic) checkKey(k SubKey) error {
	if !k.Keyed || k.Key == "" {
		return Errorf(Invalid, "conversation subscription needs a key")
	}
	return nil
}

func (conversationTopic) identity(k SubKey) SubKey { return k }

// conversationFeed is one conversation upstream's replay log. It outlives
// the upstream's attempts: the cursors are the session's, so what was
// logged stays valid across a reopen.
type conversationFeed struct{ log convLog }

// begin resumes the session from the head: the last event relayed, or for
// a fresh upstream its first subscriber's cursor.
func (f *conversationFeed) begin(u *upstream) FeedRequest {
	return FeedRequest{Topic: TopicConversation, Key: u.k.key, Cursor: u.head}
}

// liveOnAccept is true: once the session accepts the feed, its frames
// follow in order, and a joiner is owed only what it missed.
func (*conversationFeed) liveOnAccept() bool { return true }

// owed is the logged events after a's cursor; a cursor that is neither
// the head nor logged is taken to be ahead (see the file comment).
func (f *conversationFeed) owed(u *upstream, a *attachment) ([]Envelope, bool) {
	f.stopWaiting(a)
	if a.cursor == "" || a.cursor == u.head {
		return nil, true
	}
	events, ok := f.log.after(a.cursor)
	if !ok {
		a.ahead = a.cursor
		b := u.b
		a.aheadTimer = b.h.clock.AfterFunc(conversationAheadWait, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if a.up == u && a.ahead != "" && !a.pending {
				a.ahead = ""
				b.resyncLocked(a, u.head, nil)
				b.settleLocked()
			}
		})
		return nil, true
	}
	owed := make([]Envelope, len(events))
	for i, ev := range events {
		owed[i] = a.envelope(EventData, ev.cursor, ev.data)
	}
	return owed, true
}

func (f *conversationFeed) frame(u *upstream, fr FeedFrame) {
	switch fr.Kind {
	case FrameOpen:
		if u.head == "" {
			u.head = fr.Cursor
		}
	case FrameData:
		f.log.add(fr.Cursor, fr.Data)
		u.head = fr.Cursor
		for a := range u.subs {
			switch {
			case a.pending:
			case a.ahead == fr.Cursor: // caught up: what follows is news
				f.stopWaiting(a)
				a.cursor = fr.Cursor
			case a.ahead != "": // the joiner has this one already
			default:
				a.cursor = fr.Cursor
				u.b.deliverLocked(a, a.envelope(EventData, fr.Cursor, fr.Data))
			}
		}
	case FrameResync:
		// The session rewrote the conversation: nobody can continue from
		// what they hold, and the upstream is done.
		for a := range u.subs {
			u.b.resyncLocked(a, u.head, fr.Data)
		}
		u.b.closeUpstreamLocked(u)
	}
}

// stopWaiting ends a's wait for its cursor.
func (f *conversationFeed) stopWaiting(a *attachment) {
	a.ahead = ""
	if a.aheadTimer != nil {
		a.aheadTimer.Stop()
		a.aheadTimer = nil
	}
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
