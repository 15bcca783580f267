// Package live is the Hub's live stream, without its transport: the
// broker, its streams, the upstreams it shares between them, the topics
// (one file each) and the activity the Hub watches itself. HTTP framing
// is adapters/httpapi's; the broker knows no transport.
//
// # Shape
//
// A Broker owns the Streams (each by an unguessable id, bound to the
// device session that opened it) and one upstream per workspace, topic
// and key, opened on a workspace session's feed at the first subscriber,
// retried with backoff while subscribers remain, released a while after
// the last one leaves. What is particular to a topic is one type behind
// the topic interface (topic.go), in its own file, registered in
// topicImpls beside the one table of topics, hub.Topics; the broker and
// the streams know only the interface.
//
// # Invariants
//
//   - A join is exact: what a subscriber is owed (a replay, a snapshot,
//     `unavailable`), its `ready` and its registration for what follows
//     happen under Broker.mu, where publishing happens too, so no event
//     is lost or doubled (topic.go).
//   - Producers never block: each stream has one queue, bounded by time
//     and size (bound.go); a stream that falls too far behind is ended
//     and its client resumes from its cursors.
//   - Time enters only through Config.Clock, so tests move it by hand.
//   - Lock order: marksMu, then Broker.mu, then a Stream's mu. The Host's
//     methods called under Broker.mu never wait on a port, and the Host's
//     commit path is entered with marksMu alone held.
//
// # Seams
//
// The broker reaches the Hub service only through Host (host.go): the
// registry, the running sessions, whether a device session is active,
// repositories, and CommitMarks, through which the activity marks behind
// `finished` are written by the service's one commit path. The service
// tells the broker what its commits mean by calling its exported methods
// (workspaces.go, EndDeviceSessionStreams, AnnounceWorktrees). Like
// package hub, it is pure, and it imports no package of Wharf's but hub
// and hub/internal: the service and families use it, never the other way
// (hub/deps_test.go enforces both).
package live
