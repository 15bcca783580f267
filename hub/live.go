package hub

import "unicode/utf8"

// Topic names what a live subscription follows.
type Topic string

// The topics of the live stream. Activity is Hub-wide and turned on when a
// stream opens; the others belong to the stream's workspace.
const (
	TopicDocument     Topic = "document"
	TopicInventory    Topic = "inventory"
	TopicConversation Topic = "conversation"
	TopicActivity     Topic = "activity"
	TopicWorktrees    Topic = "worktrees"
)

// Limits of the live stream (the contract's Limits table).
const (
	MaxLiveSubscriptions = 16
	MaxLiveKeyBytes      = 4096
	MaxLiveCursorBytes   = 1024
	MaxLiveWorkspaceID   = 256
)

// SubKey identifies a subscription within a stream: its topic and key.
// Keyed distinguishes a document subscription with an empty key (its
// envelopes carry `key: ""`) from one without a key.
type SubKey struct {
	Topic Topic
	Key   string
	Keyed bool
}

// Subscription is a topic and key with the cursor to resume from; an empty
// cursor asks for the current state.
type Subscription struct {
	SubKey
	Cursor string
}

// SubscriptionChange is a change to a stream's subscriptions. Removals
// apply before additions.
type SubscriptionChange struct {
	Add    []Subscription
	Remove []SubKey
}

// EventKind is the kind of a live event: data or one of the signals.
type EventKind string

// The kinds of live events.
const (
	EventData        EventKind = "data"
	EventReady       EventKind = "ready"
	EventResync      EventKind = "resync"
	EventUnavailable EventKind = "unavailable"
)

// Envelope is one live event as a stream carries it (LiveEnvelope).
type Envelope struct {
	// WS is the stream's workspace, or for activity the described one.
	WS     string
	Topic  Topic
	Key    string
	Keyed  bool // whether the envelope carries Key
	Cursor string
	Kind   EventKind
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

// CheckLiveWorkspaceID validates the `ws` parameter of a live stream before
// the workspace is looked up.
func CheckLiveWorkspaceID(ws string, present bool) error {
	switch {
	case !present:
		return Errorf(Invalid, "workspace id required")
	case ws == "" || len(ws) > MaxLiveWorkspaceID || !utf8.ValidString(ws):
		return Errorf(Invalid, "invalid workspace id")
	}
	return nil
}

// CheckSubscription validates one subscription's topic, key and cursor
// against the contract, as the topic it names defines them. It does not
// look at the set it joins.
func (h *Hub) CheckSubscription(s Subscription) error {
	if err := h.live.checkSubKey(s.SubKey); err != nil {
		return err
	}
	if len(s.Cursor) > MaxLiveCursorBytes {
		return Errorf(Invalid, "subscription cursor is too large")
	}
	if !utf8.ValidString(s.Cursor) {
		return Errorf(Invalid, "subscription cursor must be a string")
	}
	return nil
}

// normalizeSubs checks subs and de-duplicates them by identity, the last
// entry winning, keeping first-seen order.
func (h *Hub) normalizeSubs(subs []Subscription) ([]Subscription, error) {
	if len(subs) > MaxLiveSubscriptions {
		return nil, Errorf(Invalid, "too many subscriptions")
	}
	out := make([]Subscription, 0, len(subs))
	at := map[SubKey]int{}
	for _, s := range subs {
		if err := h.CheckSubscription(s); err != nil {
			return nil, err
		}
		id := h.live.identity(s.SubKey)
		if i, ok := at[id]; ok {
			out[i] = s
			continue
		}
		at[id] = len(out)
		out = append(out, s)
	}
	return out, nil
}
