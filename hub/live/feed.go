package live

import "github.com/wharfhub/wharf/hub"

// This file is what the topics fed by a workspace session (document,
// inventory, conversation) share: subscribers attach to one upstream per
// workspace, topic and key (upstream.go opens, retries and releases
// it), joiners are owed what the topic's codec says, and frames fan out to
// the subscribers already attached. Everything here runs under
// Broker.mu.

// feedTopic is the topic part every session-fed topic shares; the
// topic's own type adds its key rules.
type feedTopic struct {
	b        *Broker
	topic    hub.Topic
	newCodec func() feedCodec // one per upstream
}

func (t *feedTopic) name() hub.Topic             { return t.topic }
func (t *feedTopic) feed() *feedTopic            { return t }
func (t *feedTopic) checkKey(hub.SubKey) error   { return nil }
func (t *feedTopic) attachLocked(a *attachment)  { t.b.followLocked(a, t) }
func (t *feedTopic) releaseLocked(a *attachment) { t.b.unfollowLocked(a) }

// feedCodec is what is particular to one upstream of a session-fed topic:
// what it asks the session for, what it keeps for joiners and what a frame
// does. The upstream owns one and calls it under Broker.mu.
type feedCodec interface {
	// begin prepares a fresh attempt of u (a topic with Hub-made cursors
	// starts a new epoch and forgets its state) and returns the request.
	begin(u *upstream) hub.FeedRequest
	// liveOnAccept reports whether u is live as soon as the session
	// accepts the feed, rather than at its first frame.
	liveOnAccept() bool
	// owed returns what a, joining the live u with the cursor a.cursor,
	// is owed before `ready`; false when that cursor cannot be replayed,
	// and a is sent `resync` instead.
	owed(u *upstream, a *attachment) ([]Envelope, bool)
	// frame takes one frame of u's feed, through the broker's primitives
	// (liveLocked, fanOutLocked, failLocked, resyncLocked,
	// closeUpstreamLocked).
	frame(u *upstream, fr hub.FeedFrame)
}

// feedRefuser is a feedCodec that answers the session's word that it has
// no such feed (NotFound) itself, rather than retrying it as any other
// failure.
type feedRefuser interface {
	refused(u *upstream)
}

// followLocked attaches a to the upstream of its workspace, topic and key,
// opening the upstream if it is new. A fresh upstream starts at its first
// subscriber's cursor: a topic with session-made cursors resumes the
// session from it.
func (b *Broker) followLocked(a *attachment, t *feedTopic) {
	k := upKey{ws: a.s.ws, topic: t.topic, key: b.identity(a.sub.SubKey).Key}
	fresh := b.ups[k] == nil
	u := b.upstreamFor(k, t)
	a.up = u
	u.subs[a] = struct{}{}
	switch {
	case u.state == upLive:
		b.joinLiveLocked(u, a)
	case u.state == upOpening:
		a.pending = true
	case fresh:
		a.pending = true
		u.head = a.cursor
		b.openLocked(u)
	default:
		b.joinFailedLocked(u, a)
	}
}

// joinLiveLocked writes what a is owed by the live upstream u, then
// `ready`; a cursor that cannot be replayed gets `resync`, and a is
// detached.
func (b *Broker) joinLiveLocked(u *upstream, a *attachment) {
	a.pending, a.told = false, false
	owed, ok := u.codec.owed(u, a)
	if !ok {
		b.resyncLocked(a, u.head, nil)
		return
	}
	if a.catchUp != nil {
		return // `ready` comes where it meets the upstream
	}
	a.cursor = u.head
	owed = append(owed, a.envelope(hub.EventReady, u.head, nil))
	b.deliverLocked(a, owed...)
}

// fanOutLocked sends one data frame to every attached subscriber of u;
// coalesce marks a document snapshot, which a newer one may replace while
// both wait unsent.
func (b *Broker) fanOutLocked(u *upstream, data []byte, cursor string, coalesce bool) {
	for a := range u.subs {
		if a.pending {
			continue
		}
		e := a.envelope(hub.EventData, cursor, data)
		e.coalesce = coalesce
		a.cursor = cursor
		b.deliverLocked(a, e)
	}
}

// resyncLocked sends a `resync` (carrying data, for a conversation, when
// the session gave one) and detaches a: it stays out of its stream's
// subscriptions until the client adds it again.
func (b *Broker) resyncLocked(a *attachment, cursor string, data []byte) {
	b.deliverLocked(a, a.envelope(hub.EventResync, cursor, data))
	s := a.s
	s.mu.Lock()
	if id := b.identity(a.sub.SubKey); s.subs[id] == a {
		delete(s.subs, id)
	}
	s.mu.Unlock()
	b.unfollowLocked(a)
}
