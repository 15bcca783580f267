package live

import (
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// Envelope is one live event as a stream carries it (LiveEnvelope).
type Envelope struct {
	// WS is the stream's workspace, or for activity the described one.
	WS     string
	Topic  hub.Topic
	Key    string
	Keyed  bool // whether the envelope carries Key
	Cursor string
	Kind   hub.EventKind
	// Data is the payload as encoded JSON: set on data events and on a
	// conversation resync; nil otherwise. Shared between streams: never
	// modified.
	Data []byte

	// coalesce marks a document snapshot: a newer one of the same
	// subscription replaces it while both wait unsent.
	coalesce bool
}

// size approximates the bytes an envelope takes on the wire, for the
// stream backlog bound.
func (e Envelope) size() int {
	return 64 + len(e.WS) + len(e.Key) + len(e.Cursor) + len(e.Data)
}

// CheckSubscription validates one subscription's topic, key and cursor
// against the contract, as the topic it names defines them. It does not
// look at the set it joins.
func (b *Broker) CheckSubscription(s hub.Subscription) error {
	if err := b.checkSubKey(s.SubKey); err != nil {
		return err
	}
	if len(s.Cursor) > hub.MaxLiveCursorBytes {
		return hub.Errorf(hub.Invalid, "subscription cursor is too large")
	}
	if !utf8.ValidString(s.Cursor) {
		return hub.Errorf(hub.Invalid, "subscription cursor must be a string")
	}
	return nil
}

// normalizeSubs checks subs and de-duplicates them by identity, the last
// entry winning, keeping first-seen order.
func (b *Broker) normalizeSubs(subs []hub.Subscription) ([]hub.Subscription, error) {
	if len(subs) > hub.MaxLiveSubscriptions {
		return nil, hub.Errorf(hub.Invalid, "too many subscriptions")
	}
	out := make([]hub.Subscription, 0, len(subs))
	at := map[hub.SubKey]int{}
	for _, s := range subs {
		if err := b.CheckSubscription(s); err != nil {
			return nil, err
		}
		id := b.identity(s.SubKey)
		if i, ok := at[id]; ok {
			out[i] = s
			continue
		}
		at[id] = len(out)
		out = append(out, s)
	}
	return out, nil
}
