package live

import (
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// topic is what is particular to one topic of the live stream in the
// Hub: when two subscriptions are one, what a joining subscriber is owed
// and how it is released. What every side knows of a topic (whether
// clients name it, how it is keyed, whether a session feeds it) is in the
// one table, hub.Topics; each topic's implementation is one type in its
// own file (topic_*.go), registered in topicImpls; the broker, the
// streams and the HTTP transport know only this interface.
//
// attachLocked and releaseLocked run under Broker.mu, which is what
// makes a join exact: the replay or snapshot a subscriber is owed, its
// `ready` and its registration for what follows happen in one critical
// section, so an event is either part of what it is owed or delivered to
// it afterwards, never both and never neither.
type topic interface {
	// name is the topic's name on the wire.
	name() hub.Topic
	// checkKey validates what the topic itself asks of a key, once the
	// table's key rule and the key's size and encoding are checked; its
	// errors are the contract's 400 messages.
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

// topicImpls are the Hub's implementations of the topics of hub.Topics.
// A new topic is a line in the table, one new file and one line here.
var topicImpls = map[hub.Topic]func(*Broker) topic{
	hub.TopicDocument:     func(b *Broker) topic { return newDocumentTopic(b) },
	hub.TopicInventory:    func(b *Broker) topic { return newInventoryTopic(b) },
	hub.TopicConversation: func(b *Broker) topic { return newConversationTopic(b) },
	hub.TopicActivity:     func(b *Broker) topic { return newActivityTopic(b) },
	hub.TopicWorktrees:    func(b *Broker) topic { return newWorktreesTopic(b) },
}

// newTopics makes the broker's topics, one for every topic of the table,
// in its order; a topic of the table the Hub does not implement is a
// programming error every test meets.
func newTopics(b *Broker) []topic {
	var out []topic
	for _, spec := range hub.Topics() {
		impl := topicImpls[spec.Name]
		if impl == nil {
			panic("live: no implementation of the live topic " + string(spec.Name))
		}
		out = append(out, impl(b))
	}
	return out
}

// topic returns the topic named t, or nil.
func (b *Broker) topic(t hub.Topic) topic {
	for _, lt := range b.topics {
		if lt.name() == t {
			return lt
		}
	}
	return nil
}

// checkSubKey validates a topic and its key: the key's size and encoding,
// then the table's rules (a topic clients name, the key it takes), then
// what the topic itself asks of its key.
func (b *Broker) checkSubKey(k hub.SubKey) error {
	if len(k.Key) > hub.MaxLiveKeyBytes {
		return hub.Errorf(hub.Invalid, "subscription key is too large")
	}
	if !utf8.ValidString(k.Key) {
		return hub.Errorf(hub.Invalid, "subscription key must be a string")
	}
	spec, ok := hub.LookupTopic(k.Topic)
	if !ok || !spec.Subscribable() {
		return hub.SubscriptionTopicError()
	}
	switch {
	case spec.Key == hub.KeyNone && k.Keyed:
		return hub.Errorf(hub.Invalid, "%s subscription takes no key", k.Topic)
	case spec.Key == hub.KeyRequired && (!k.Keyed || k.Key == ""):
		return hub.Errorf(hub.Invalid, "%s subscription needs a key", k.Topic)
	}
	return b.topic(k.Topic).checkKey(k)
}

// identity is the identity of k, which has passed checkSubKey.
func (b *Broker) identity(k hub.SubKey) hub.SubKey { return b.topic(k.Topic).identity(k) }

// subscribable reports whether clients name topic t.
func subscribable(t hub.Topic) bool {
	spec, ok := hub.LookupTopic(t)
	return ok && spec.Subscribable()
}
