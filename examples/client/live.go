package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The shapes of the live stream, as api/openapi.yaml names them. Only the
// fields this client reads are declared.

// Topics (LiveTopic) and event kinds (LiveEvent) of this contract revision.
// Anything else means the client is out of date; it is reported, never
// guessed at.
const (
	topicDocument     = "document"
	topicInventory    = "inventory"
	topicConversation = "conversation"
	topicActivity     = "activity"
	topicWorktrees    = "worktrees"

	kindData        = "data"
	kindReady       = "ready"
	kindResync      = "resync"
	kindUnavailable = "unavailable"
)

func knownTopic(t string) bool {
	switch t {
	case topicDocument, topicInventory, topicConversation, topicActivity, topicWorktrees:
		return true
	}
	return false
}

func knownKind(k string) bool {
	switch k {
	case kindData, kindReady, kindResync, kindUnavailable:
		return true
	}
	return false
}

// Bounds the Hub checks on `subs` and on subscription changes; a client
// checks them before sending.
const (
	maxKeyBytes         = 4096
	maxCursorBytes      = 1024
	maxWorkspaceIDBytes = 256
)

// liveHello is the data of the `hello` event (LiveHello).
type liveHello struct {
	StreamID string `json:"streamId"`
}

// liveEnvelope is the data of every `live` event (LiveEnvelope). Key is a
// pointer because its absence is meaningful: inventory, activity and
// worktrees envelopes have none.
type liveEnvelope struct {
	WS     string    `json:"ws"`
	Topic  string    `json:"topic"`
	Key    *string   `json:"key"`
	Cursor string    `json:"cursor"`
	Event  liveEvent `json:"event"`
}

// liveEvent is LiveEvent: `data` with a payload, or a signal.
type liveEvent struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// subscription is a LiveSubscription: a topic, its key where the topic has
// one, and the cursor to resume from. The client keeps one per
// subscription and sends it in `subs` and in re-adds; its identity is the
// topic and the key, an absent key counting as "".
type subscription struct {
	Topic  string `json:"topic"`
	Key    string `json:"key,omitempty"`
	Cursor string `json:"cursor"`
}

// subscriptionChange is a LiveSubscriptionChange. This client only adds.
type subscriptionChange struct {
	Add []subscription `json:"add"`
}

// workspaceActivity is the data of the activity topic.
type workspaceActivity struct {
	Running  bool `json:"running"`
	Working  bool `json:"working"`
	Awaiting bool `json:"awaiting"`
	Finished bool `json:"finished"`
}

// documentUpdate holds the fields of a DocumentUpdate (snapshot or patch)
// that tell whether and where it applies.
type documentUpdate struct {
	Kind             string `json:"kind"`
	Epoch            string `json:"epoch"`
	Revision         int64  `json:"revision"`
	PreviousRevision *int64 `json:"previousRevision"`
}

// formatEnvelope renders an envelope on one line: where it belongs, what
// kind of event it carries and its cursor, then, for activity data, the
// four facts and, for document data, which update it is. Strings that come
// from the Hub are quoted.
func formatEnvelope(env liveEnvelope) string {
	var b strings.Builder
	fmt.Fprintf(&b, "live ws=%q topic=%s", env.WS, env.Topic)
	if env.Key != nil {
		fmt.Fprintf(&b, " key=%q", *env.Key)
	}
	fmt.Fprintf(&b, " kind=%s cursor=%q", env.Event.Kind, env.Cursor)
	if env.Event.Kind != kindData {
		return b.String()
	}
	switch env.Topic {
	case topicActivity:
		var a workspaceActivity
		if err := json.Unmarshal(env.Event.Data, &a); err != nil {
			b.WriteString(" activity=unreadable")
			break
		}
		fmt.Fprintf(&b, " running=%t working=%t awaiting=%t finished=%t",
			a.Running, a.Working, a.Awaiting, a.Finished)
	case topicDocument:
		var u documentUpdate
		if err := json.Unmarshal(env.Event.Data, &u); err != nil {
			b.WriteString(" update=unreadable")
			break
		}
		fmt.Fprintf(&b, " update=%q epoch=%q revision=%d", u.Kind, u.Epoch, u.Revision)
		if u.PreviousRevision != nil {
			fmt.Fprintf(&b, " previousRevision=%d", *u.PreviousRevision)
		}
	}
	return b.String()
}
