package live

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// A joiner of a conversation whose cursor the shared upstream cannot place
// (topic_conversation.go) catches up on a feed of its own, opened from
// its cursor: the session replays what followed it, or answers `resync`
// with the ChatResyncEvent that says why it cannot (a cursor of another
// generation, too old, not a cursor), which the joiner gets as it is. The
// joiner receives only its own feed's frames until the two feeds meet:
// one of its frames is the upstream's head or in the upstream's log (the
// rest comes from the log), or the upstream relays the frame the joiner
// is at. It then gets `ready` and follows the shared upstream; its own
// feed is closed. Both feeds are the session's one ordered sequence, so
// the joiner gets each event once and in order.
//
// A catch-up feed that fails tells its joiner `unavailable` (once per
// episode) and is opened again from where the joiner is, after a backoff,
// while the upstream stays live; when the upstream fails, its recovery
// joins everyone again. A session that has no such conversation any more
// answers as refused does. Catch-ups are bounded by the subscriptions:
// one per attachment at most, and short-lived, since a session replays at
// once.

// catchUp is one joiner's own feed.
type catchUp struct {
	cancel context.CancelFunc // closes the feed and ends its reader
}

// catchUpLocked opens a's own feed from its cursor. b.mu is held.
func (f *conversationFeed) catchUpLocked(u *upstream, a *attachment) {
	b := u.b
	b.stopCatchUpLocked(a)
	ctx, cancel := context.WithCancel(b.bg)
	cu := &catchUp{cancel: cancel}
	a.catchUp = cu
	rs := b.host.WorkspaceSession(u.k.ws)
	if rs == nil || b.closed {
		// The session is ending: its end fails the upstream, whose
		// recovery joins a again.
		return
	}
	req := hub.FeedRequest{Topic: hub.TopicConversation, Key: u.k.key, Cursor: a.cursor}
	b.wg.Add(1)
	go f.runCatchUp(u, a, cu, rs, ctx, req)
}

// runCatchUp relays the frames of a's own feed until it meets the
// upstream, ends, or is stopped.
func (f *conversationFeed) runCatchUp(u *upstream, a *attachment, cu *catchUp, rs hub.WorkspaceSession, ctx context.Context, req hub.FeedRequest) {
	b := u.b
	defer b.wg.Done()
	defer cu.cancel()
	octx, cancel := context.WithTimeout(ctx, upstreamOpenTimeout)
	feed, err := rs.OpenFeed(octx, req)
	cancel()
	if err == nil {
		defer feed.Close()
	}
	for err == nil {
		var fr hub.FeedFrame
		if fr, err = feed.Next(ctx); err == nil {
			err = normalizeFrame(&fr)
		}
		if err != nil {
			break
		}
		b.mu.Lock()
		done := a.catchUp != cu || f.catchUpFrameLocked(u, a, fr)
		b.settleLocked()
		b.mu.Unlock()
		if done {
			return
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.catchUp == cu {
		f.catchUpFailedLocked(u, a, err)
		b.settleLocked()
	}
}

// catchUpFrameLocked relays one frame of a's own feed, reporting whether
// the catch-up is over. b.mu is held.
func (f *conversationFeed) catchUpFrameLocked(u *upstream, a *attachment, fr hub.FeedFrame) bool {
	b := u.b
	switch fr.Kind {
	case hub.FrameData:
		a.cursor = fr.Cursor
		b.deliverLocked(a, a.envelope(hub.EventData, fr.Cursor, fr.Data))
		if fr.Cursor == u.head {
			b.metLocked(u, a, nil)
			return true
		}
		if events, ok := f.log.after(fr.Cursor); ok {
			owed := make([]Envelope, len(events))
			for i, ev := range events {
				owed[i] = a.envelope(hub.EventData, ev.cursor, ev.data)
			}
			b.metLocked(u, a, owed)
			return true
		}
	case hub.FrameResync:
		b.stopCatchUpLocked(a)
		b.resyncLocked(a, a.cursor, fr.Data)
		return true
	}
	return false // an open frame, which a feed opened with a cursor does not send
}

// catchUpFailedLocked handles the end of a's own feed before it met the
// upstream. b.mu is held.
func (f *conversationFeed) catchUpFailedLocked(u *upstream, a *attachment, err error) {
	b := u.b
	b.stopCatchUpLocked(a)
	if hub.KindOf(err) == hub.NotFound {
		b.resyncLocked(a, a.cursor, conversationClosed(u.k.key))
		return
	}
	b.tellUnavailableLocked(u, a)
	d := a.retryDelay
	if d == 0 {
		d = upstreamRetryMin
	}
	a.retryDelay = min(2*d, upstreamRetryMax)
	a.rejoin = b.clock.AfterFunc(d, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if a.up == u && a.pending && u.state == upLive {
			a.pending = false // still told: the episode goes on until it meets
			f.catchUpLocked(u, a)
			b.settleLocked()
		}
	})
}

// metLocked ends a's catch-up where it meets the upstream: a gets owed,
// the upstream's events it still misses, then `ready`. b.mu is held.
func (b *Broker) metLocked(u *upstream, a *attachment, owed []Envelope) {
	b.stopCatchUpLocked(a)
	a.cursor = u.head
	a.told, a.retryDelay = false, 0
	b.deliverLocked(a, append(owed, a.envelope(hub.EventReady, u.head, nil))...)
}

// stopCatchUpLocked closes a's own feed and cancels its retry, if any.
// b.mu is held.
func (b *Broker) stopCatchUpLocked(a *attachment) {
	if a.catchUp != nil {
		a.catchUp.cancel()
		a.catchUp = nil
	}
	if a.rejoin != nil {
		a.rejoin.Stop()
		a.rejoin = nil
	}
}
