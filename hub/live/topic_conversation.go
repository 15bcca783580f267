package live

import (
	"encoding/json"

	"github.com/wharfhub/wharf/hub"
)

// The conversation topic: one conversation's ordered events (the key is
// its id). Cursors are the session's own, opaque to the Hub, which only
// compares them for equality: its upstream keeps a byte-bounded replay log
// of the latest events, so a subscriber resuming from a logged cursor gets
// what followed it. Any other cursor only the session can place: older
// than the log, of another generation, not a cursor at all, or ahead of
// what the upstream relayed (a client took a snapshot while its events
// were on their way). Such a joiner catches up on a feed of its own from
// its cursor (catchup.go) until it meets the shared upstream.
//
// Every `resync` of the topic carries its ChatResyncEvent. The session
// writes them, with one exception: when the session answers that it has
// no such conversation (closed, or never there), the Hub tells every
// subscriber once with a resync of reason hub.ResyncConversationClosed, made
// by conversationClosed, and releases the upstream without retrying it.
// A resync from the session reaches every subscriber and releases the
// upstream too.

// maxConversationLog bounds the bytes of conversation events an upstream
// keeps for replay.
const maxConversationLog = 256 << 10

// conversationClosed is the ChatResyncEvent the Hub sends for the
// conversation id when the session has none: with no head to report, its
// generation is empty and its sequence 0.
func conversationClosed(id string) []byte {
	data, err := json.Marshal(struct {
		Generation     string `json:"generation"`
		Sequence       int64  `json:"sequence"`
		ConversationID string `json:"conversationId"`
		Type           string `json:"type"`
		Reason         string `json:"reason"`
	}{"", 0, id, "resync", hub.ResyncConversationClosed})
	if err != nil {
		panic("hub: a resync event does not encode: " + err.Error()) // strings and an integer always do
	}
	return data
}

type conversationTopic struct{ feedTopic }

func newConversationTopic(b *Broker) *conversationTopic {
	return &conversationTopic{feedTopic{b: b, topic: hub.TopicConversation, newCodec: func() feedCodec { return &conversationFeed{} }}}
}

func (conversationTopic) identity(k hub.SubKey) hub.SubKey { return k }

// conversationFeed is one conversation upstream's replay log. It outlives
// the upstream's attempts: the cursors are the session's, so what was
// logged stays valid across a reopen.
type conversationFeed struct{ log convLog }

// begin resumes the session from the head: the last event relayed, or for
// a fresh upstream its first subscriber's cursor.
func (f *conversationFeed) begin(u *upstream) hub.FeedRequest {
	return hub.FeedRequest{Topic: hub.TopicConversation, Key: u.k.key, Cursor: u.head}
}

// liveOnAccept is true: once the session accepts the feed, its frames
// follow in order, and a joiner is owed only what it missed.
func (*conversationFeed) liveOnAccept() bool { return true }

// owed is the logged events after a's cursor. A cursor that is neither
// the head nor logged starts a's catch-up (see the file comment), after
// which a's `ready` comes where it meets the upstream.
func (f *conversationFeed) owed(u *upstream, a *attachment) ([]Envelope, bool) {
	u.b.stopCatchUpLocked(a)
	if a.cursor == "" || a.cursor == u.head {
		return nil, true
	}
	events, ok := f.log.after(a.cursor)
	if !ok {
		f.catchUpLocked(u, a)
		return nil, true
	}
	owed := make([]Envelope, len(events))
	for i, ev := range events {
		owed[i] = a.envelope(hub.EventData, ev.cursor, ev.data)
	}
	return owed, true
}

func (f *conversationFeed) frame(u *upstream, fr hub.FeedFrame) {
	switch fr.Kind {
	case hub.FrameOpen:
		if u.head == "" {
			u.head = fr.Cursor
		}
	case hub.FrameData:
		f.log.add(fr.Cursor, fr.Data)
		u.head = fr.Cursor
		for a := range u.subs {
			switch {
			case a.pending:
			case a.catchUp != nil:
				// A joiner catching up has what the upstream relays up to
				// where the two meet, and gets it from its own feed.
				if a.cursor == fr.Cursor {
					u.b.metLocked(u, a, nil)
				}
			default:
				a.cursor = fr.Cursor
				u.b.deliverLocked(a, a.envelope(hub.EventData, fr.Cursor, fr.Data))
			}
		}
	case hub.FrameResync:
		// The session rewrote the conversation, or closed it: nobody can
		// continue from what they hold, and the upstream is done.
		for a := range u.subs {
			u.b.resyncLocked(a, a.cursor, fr.Data)
		}
		u.b.closeUpstreamLocked(u)
	}
}

// refused answers the session's word that it has no such conversation:
// closed is closed, so every subscriber is told once and the upstream is
// released rather than retried.
func (f *conversationFeed) refused(u *upstream) {
	closed := conversationClosed(u.k.key)
	for a := range u.subs {
		u.b.resyncLocked(a, a.cursor, closed)
	}
	u.b.closeUpstreamLocked(u)
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
