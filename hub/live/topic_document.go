package live

import (
	"bytes"
	"encoding/json"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/internal/docstate"
)

// The document topic: a workspace's documents as the child sees them,
// under one watch context (the key, a LiveDocumentKey). Its upstream keeps
// the materialized state (a docstate.State), so a subscriber that joins or falls
// behind gets one snapshot rather than a replay; caught-up subscribers get
// every patch in order. Cursors are the Hub's own.

type documentTopic struct{ feedTopic }

func newDocumentTopic(b *Broker) *documentTopic {
	return &documentTopic{feedTopic{b: b, topic: hub.TopicDocument, newCodec: func() feedCodec { return &documentFeed{} }}}
}

func (documentTopic) checkKey(k hub.SubKey) error {
	_, err := hub.ParseDocumentKey(k.Key)
	return err
}

// identity compares keys as contexts, not spellings: two spellings of one
// context are one subscription and one upstream. A document subscription
// with an empty key and one without a key are the same.
func (documentTopic) identity(k hub.SubKey) hub.SubKey {
	c, _ := hub.ParseDocumentKey(k.Key)
	return hub.SubKey{Topic: hub.TopicDocument, Key: c.String()}
}

// documentFeed is one document upstream's state.
type documentFeed struct{ doc docstate.State }

func (f *documentFeed) begin(u *upstream) hub.FeedRequest {
	u.newEpoch()
	f.doc = docstate.State{}
	return hub.FeedRequest{Topic: hub.TopicDocument, Key: u.k.key}
}

// liveOnAccept is false: the upstream is live at its first snapshot,
// which is what waiting joiners are owed.
func (*documentFeed) liveOnAccept() bool { return false }

// owed is the materialized snapshot, unless a's cursor is the head.
func (f *documentFeed) owed(u *upstream, a *attachment) ([]Envelope, bool) {
	if a.cursor == u.head {
		return nil, true
	}
	snap := f.doc.Snapshot()
	if snap == nil {
		return nil, true
	}
	e := a.envelope(hub.EventData, u.head, snap)
	e.coalesce = true
	return []Envelope{e}, true
}

func (f *documentFeed) frame(u *upstream, fr hub.FeedFrame) {
	if fr.Kind != hub.FrameData {
		return
	}
	switch f.doc.Apply(fr.Data) {
	case docstate.Ignored:
		return
	case docstate.Resync:
		// The Hub's state and the session's disagree: start over from a
		// fresh snapshot rather than relay a gap.
		u.b.failLocked(u, u.gen, hub.Errorf(hub.Unavailable, "a document update could not be applied"))
		return
	}
	u.advance()
	if u.state != upLive {
		u.b.liveLocked(u) // the first snapshot: the joiners get it materialized
		return
	}
	u.b.fanOutLocked(u, fr.Data, u.head, isSnapshot(fr.Data))
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
