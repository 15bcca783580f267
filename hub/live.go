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

// The reasons of a conversation resync (ChatResyncEvent.reason). The
// contract names conversation-rewritten; the others are Wharf's, each
// documented in api/openapi.yaml.
const (
	// ResyncGenerationChanged: the cursor is of another generation of the
	// conversation (an earlier workspace session's).
	ResyncGenerationChanged = "generation-changed"
	// ResyncRetentionGap: the events after the cursor are no longer kept,
	// or the cursor is ahead of the head.
	ResyncRetentionGap = "retention-gap"
	// ResyncInvalidCursor: the cursor is not one the workspace made.
	ResyncInvalidCursor = "invalid-cursor"
	// ResyncConversationClosed: the workspace no longer has the
	// conversation: it was closed (the session says so while the
	// conversation is followed), or the session has none with the
	// subscription's key. A client stops following it; adding the
	// subscription again gets the same answer.
	ResyncConversationClosed = "conversation-closed"
)
