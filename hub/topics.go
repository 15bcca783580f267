package hub

import "strings"

// This file is the one table of the live topics (the Topic constants are
// in live.go): for each topic, what the Hub's broker, the HTTP transport,
// the protocol of the workspace child (adapters/internal/childproto), the
// fakes and the dashboard (adapters/web/static/topics.js) need to know of
// it. Those sides read the table rather than name the topics themselves,
// so a topic is added here, once, and every side that must do something
// particular for it fails a test until it does.
//
// The table states the contract: the Topics table of its live channel
// (Domain, Key, Data schema and Cursor columns) and the LiveTopic and
// LiveSubscription schemas of api/openapi.yaml. A test holds it to both.

// Domain is where a topic's data is made: the contract's Domain column.
type Domain int

// The domains.
const (
	// DomainWorkspace: the workspace child makes the data, and the Hub
	// relays it from the child's feed of the topic.
	DomainWorkspace Domain = iota + 1
	// DomainHub: the Hub makes the data itself (possibly from what a
	// child's feed tells it, as activity does).
	DomainHub
)

func (d Domain) String() string {
	switch d {
	case DomainWorkspace:
		return "workspace"
	case DomainHub:
		return "hub"
	}
	return "Domain(?)"
}

// KeyRule says whether a topic's subscriptions take a key.
type KeyRule int

// The key rules.
const (
	// KeyNone: a subscription never names a key (one that does is
	// refused), and the topic's envelopes carry none.
	KeyNone KeyRule = iota + 1
	// KeyOptional: the key may be left out, which is the same
	// subscription as the empty key (the document topic's default watch
	// context); an envelope carries the key exactly when the client gave
	// one.
	KeyOptional
	// KeyRequired: every subscription names a non-empty key (the
	// conversation id), which its envelopes carry.
	KeyRequired
)

func (k KeyRule) String() string {
	switch k {
	case KeyNone:
		return "none"
	case KeyOptional:
		return "optional"
	case KeyRequired:
		return "required"
	}
	return "KeyRule(?)"
}

// CursorSource is who makes a topic's cursors: the contract's Cursor
// column.
type CursorSource int

// The cursor sources.
const (
	// CursorHub: the Hub makes them; the workspace child never sees one.
	CursorHub CursorSource = iota + 1
	// CursorWorkspace: the workspace child makes them and its feed
	// resumes from one; the Hub only compares them.
	CursorWorkspace
	// CursorNone: the topic has none; envelopes carry an empty cursor and
	// a subscription's cursor is ignored.
	CursorNone
)

func (c CursorSource) String() string {
	switch c {
	case CursorHub:
		return "hub"
	case CursorWorkspace:
		return "workspace"
	case CursorNone:
		return "none"
	}
	return "CursorSource(?)"
}

// TopicSpec is what every side of the live stream knows of one topic.
type TopicSpec struct {
	// Name is the topic's name on the wire: the envelope's `topic`, the
	// subscription's `topic`, and the name of the child's feed.
	Name Topic
	// Domain is where the topic's data is made.
	Domain Domain
	// HubWide marks a topic about every workspace the caller may see
	// rather than the stream's own: its envelope's `ws` names the
	// workspace described, and a stream turns it on as it opens
	// (`activity=1`), never by naming it in a subscription. Any other
	// topic belongs to the stream's workspace and is subscribed by name.
	HubWide bool
	// Key is whether its subscriptions take a key.
	Key KeyRule
	// Cursor is who makes its cursors.
	Cursor CursorSource
	// Feed marks a topic a running workspace session serves a feed of
	// (WorkspaceSession.OpenFeed, the child's feed of the same name): the
	// Hub relays that feed, or for a topic of DomainHub makes its data
	// from it. The Hub answers a topic without a feed entirely itself.
	Feed bool
	// Data is the contract's schema of the topic's data events.
	Data string
}

// Subscribable reports whether clients name the topic in `subs` and in
// subscription changes: every topic but a Hub-wide one.
func (s TopicSpec) Subscribable() bool { return !s.HubWide }

// Keyed reports whether the topic's subscriptions may carry a key.
func (s TopicSpec) Keyed() bool { return s.Key != KeyNone }

// Resumes reports whether the topic's feed resumes from a cursor: the
// workspace makes its cursors, so a feed opened with one continues after
// it, opens with the head when opened without one, and may answer that it
// cannot resume.
func (s TopicSpec) Resumes() bool { return s.Cursor == CursorWorkspace }

// topicTable is the table, in the contract's order.
var topicTable = [...]TopicSpec{
	{Name: TopicDocument, Domain: DomainWorkspace, Key: KeyOptional, Cursor: CursorHub, Feed: true, Data: "DocumentUpdate"},
	{Name: TopicInventory, Domain: DomainWorkspace, Key: KeyNone, Cursor: CursorHub, Feed: true, Data: "ConversationInventoryEvent"},
	{Name: TopicConversation, Domain: DomainWorkspace, Key: KeyRequired, Cursor: CursorWorkspace, Feed: true, Data: "ChatEvent"},
	{Name: TopicActivity, Domain: DomainHub, HubWide: true, Key: KeyNone, Cursor: CursorHub, Feed: true, Data: "WorkspaceActivity"},
	{Name: TopicWorktrees, Domain: DomainHub, Key: KeyNone, Cursor: CursorNone, Data: "WorktreeInventoryEvent"},
}

// Topics returns the table of the live topics, every topic once, in the
// contract's order (document, inventory, conversation, activity,
// worktrees). The slice is the caller's.
func Topics() []TopicSpec {
	out := make([]TopicSpec, len(topicTable))
	copy(out, topicTable[:])
	return out
}

// LookupTopic returns the table's entry of topic t; false when t is no
// topic of the live stream.
func LookupTopic(t Topic) (TopicSpec, bool) {
	for _, s := range topicTable {
		if s.Name == t {
			return s, true
		}
	}
	return TopicSpec{}, false
}

// SubscriptionTopicError is the contract's 400 for a subscription whose
// topic is none a client may name: "subscription topic must be document,
// inventory, conversation, or worktrees", the subscribable topics in the
// table's order.
func SubscriptionTopicError() error {
	var names []string
	for _, s := range topicTable {
		if s.Subscribable() {
			names = append(names, string(s.Name))
		}
	}
	list := strings.Join(names, "")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + ", or " + names[n-1]
	}
	return Errorf(Invalid, "subscription topic must be %s", list)
}
