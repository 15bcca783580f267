package live

import "github.com/wharfhub/wharf/hub"

// The inventory topic: invalidations of a workspace's conversation
// inventory. Ticks collapse: a joiner or a subscriber behind gets the
// latest one, which stands for every one it missed. Cursors are the Hub's
// own.

type inventoryTopic struct{ feedTopic }

func newInventoryTopic(b *Broker) *inventoryTopic {
	return &inventoryTopic{feedTopic{b: b, topic: hub.TopicInventory, newCodec: func() feedCodec { return &inventoryFeed{} }}}
}

func (inventoryTopic) identity(k hub.SubKey) hub.SubKey { return k }

// inventoryFeed is one inventory upstream's state: its latest tick.
type inventoryFeed struct{ latest []byte }

func (f *inventoryFeed) begin(u *upstream) hub.FeedRequest {
	u.newEpoch()
	f.latest = nil
	return hub.FeedRequest{Topic: hub.TopicInventory}
}

// liveOnAccept is false: the upstream is live at its opening tick.
func (*inventoryFeed) liveOnAccept() bool { return false }

// owed is the latest tick, unless a's cursor is the head.
func (f *inventoryFeed) owed(u *upstream, a *attachment) ([]Envelope, bool) {
	if a.cursor == u.head || f.latest == nil {
		return nil, true
	}
	return []Envelope{a.envelope(hub.EventData, u.head, f.latest)}, true
}

func (f *inventoryFeed) frame(u *upstream, fr hub.FeedFrame) {
	if fr.Kind != hub.FrameData {
		return
	}
	f.latest = fr.Data
	u.advance()
	if u.state != upLive {
		u.b.liveLocked(u)
		return
	}
	u.b.fanOutLocked(u, fr.Data, u.head, false)
}
