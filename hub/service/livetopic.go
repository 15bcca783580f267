package service

import (
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// liveTopic is what is particular to one topic of the live stream: which
// keys it takes, when two subscriptions are one, what a joining subscriber
// is owed and how it is released. Each topic is one type in its own file
// (livetopic_*.go), registered in newTopics; the broker, the streams and
// the HTTP transport know only this interface.
//
// attachLocked and releaseLocked run under liveBroker.mu, which is what
// makes a join exact: the replay or snapshot a subscriber is owed, its
// `ready` and its registration for what follows happen in one critical
// section, so an event is either part of what it is owed or delivered to
// it afterwards, never both and never neither.
type liveTopic interface {
	// name is the topic's name on the wire.
	name() hub.Topic
	// subscribable reports whether clients name the topic in `subs` and
	// subscription changes. Activity is not: `activity=1` turns it on.
	subscribable() bool
	// checkKey validates a subscription's key (its size and encoding are
	// already checked); its errors are the contract's 400 messages.
	checkKey(k hub.SubKey) error
	// identity is what makes two subscriptions of a stream one (and share
	// one upstream); k has passed checkKey.
	identity(k hub.SubKey) hub.SubKey
	// attachLocked subscribes a: it queues what a is owed (a snapshot, a
	// replay, or `unavailable` while the source is down), then `ready`,
	// and registers a for what follows. A cursor that cannot be replayed
	// gets `resync` instead, and a stays detached.
	attachLocked(a *attachment)
	// releaseLocked takes a out of the topic: a removal, a replacement by
	// a newer subscription, or the end of a's stream.
	releaseLocked(a *attachment)
}

// newTopics is the one table of the live topics, in the order the
// contract's messages name them. A new topic is one new file and one line
// here.
func newTopics(b *liveBroker) []liveTopic {
	return []liveTopic{
		newDocumentTopic(b),
		newInventoryTopic(b),
		newConversationTopic(b),
		newWorktreesTopic(b),
		newActivityTopic(b),
	}
}

// topic returns the topic named t, or nil.
func (b *liveBroker) topic(t hub.Topic) liveTopic {
	for _, lt := range b.topics {
		if lt.name() == t {
			return lt
		}
	}
	return nil
}

// checkSubKey validates a topic and its key.
func (b *liveBroker) checkSubKey(k hub.SubKey) error {
	if len(k.Key) > hub.MaxLiveKeyBytes {
		return hub.Errorf(hub.Invalid, "subscription key is too large")
	}
	if !utf8.ValidString(k.Key) {
		return hub.Errorf(hub.Invalid, "subscription key must be a string")
	}
	t := b.topic(k.Topic)
	if t == nil || !t.subscribable() {
		return hub.Errorf(hub.Invalid, "subscription topic must be %s", b.subscribableNames())
	}
	return t.checkKey(k)
}

// subscribableNames lists the subscribable topics as the contract's
// message does: "document, inventory, conversation, or worktrees".
func (b *liveBroker) subscribableNames() string {
	var names []string
	for _, t := range b.topics {
		if t.subscribable() {
			names = append(names, string(t.name()))
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + ", or " + names[len(names)-1]
}

// identity is the identity of k, which has passed checkSubKey.
func (b *liveBroker) identity(k hub.SubKey) hub.SubKey { return b.topic(k.Topic).identity(k) }

// keyless is the key rule of the topics that take no key.
func keyless(k hub.SubKey) error {
	if k.Keyed {
		return hub.Errorf(hub.Invalid, "%s subscription takes no key", k.Topic)
	}
	return nil
}
