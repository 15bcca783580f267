// Package childproto is the internal protocol between the Hub's local
// backend (adapters/local) and the workspace child it starts
// (adapters/child, `wharf session`). Both sides import this package, so
// the protocol is written once: its paths, queries, messages, event names,
// payloads and framing, each with an encoder and a decoder. Decoders are
// pure functions over bytes and readers that refuse what the protocol does
// not allow, so they can be tested and fuzzed without a process.
//
// The package holds no domain types: the Hub maps these messages onto its
// ports (package hub) and the child onto its own state. It reads two
// things of package hub: the table of the live topics, from which it
// derives the feeds, so a topic is named once for the Hub, the child and
// this protocol alike; and the plain values of the notification feed
// (hub.NotificationFrame), which its encoder and decoder carry as they
// are.
//
// # Internal protocol, workspace revision 24
//
// The protocol is private to one Wharf build (the Hub always starts its own
// binary) and versioned by the workspace API revision the child reports in
// its Facts.
//
// Start: the Hub runs
//
//	<command...> session --workspace-id ID --path DIR --socket SOCK
//	    [--data-dir DATA] [--detach-grace D] [--agent ID=["command","arg",...]]...
//
// (Args.Argv; the child parses what follows `session` with ParseArgs):
// DATA is the workspace's private directory (mode 0700) where the child
// keeps its conversation inventory across restarts, and each --agent sets
// the command of a coding agent. --detach-grace lets the child outlive
// its Hub for D, to be adopted by the next (hold.go). It runs with
// a sanitized environment, in its own process group, stdin a pipe the Hub
// holds open for the child's life, stdout and stderr pipes.
//
// Readiness: the child changes into DIR (failing when DIR is not a
// directory), removes a stale socket at SOCK (refusing to remove anything
// else), listens on SOCK with mode 0600, serves HTTP on it, and only then
// writes exactly one line, ReadyLine ("ready\n"), to stdout (WriteReady;
// the Hub reads it with ReadReady). It writes nothing else to stdout;
// diagnostics go to stderr, which the Hub logs and never shows to clients.
// The Hub then confirms readiness with one GET FactsPath.
//
// Endpoints, GET unless said; every answer carries Cache-Control:
// no-store:
//
//	/_wharf/facts          {"workspaceApiRevision":24,"shells":[...]}   (Facts)
//	/s/{ID}/api/session    {"workspaceId":ID,"workspaceApiRevision":24} (the workspace API)
//	POST /_wharf/agent-login {"agent":ID}  → 204                        (AgentLogin)
//	/_wharf/notifications[?cursor=C]  the notification feed              (notifications.go)
//	/_wharf/hold           200, then held open until the child stops     (hold.go; 404 without a grace)
//
// The facts' shells are the session's terminals, {"attached","label"}
// each in creation order: the shells people opened and the terminals
// its agents opened (the workspace API under /s/{ID}/api/shells has the
// rest of each). `shells` in the activity frames is their revision: it
// moves whenever that list (a shell, a label, an attached flag) changes,
// and a frame is sent at each move, so the Hub asks the facts again only
// then; a frame without it (an older child) reads as 0.
//
// The agent login says that the login of agent ID changed on the Hub
// machine: the child forgets that the agent asked for a login, moves its
// catalog revision (the inventory feed ticks) and restarts the agent once
// no turn of it runs; an agent it does not know is no change. Its body is
// strict JSON of at most MaxAgentLoginBytes (400 otherwise); 503 while
// the child stops.
//
// The Hub forwards client requests under /s/{ID}/ verbatim, so the child
// serves that base path itself; /_wharf/ (InternalPrefix) is never
// forwarded. Any other path or method answers 404 {"error":"not found"}.
// Every error answer is JSON {"error": MESSAGE} (ErrorBody, WriteError);
// the Hub decides by status alone and never quotes the message.
//
// Feeds: the upstreams of the Hub's live stream, one per topic the Hub's
// topic table (hub.Topics) marks as a feed, each derived from that table
// rather than named here (FeedRequest). A feed is one GET of
//
//	/_wharf/feeds/TOPIC[?key=KEY][&cursor=CURSOR]               (FeedPath, FeedRequest.URI)
//
// where `key` is sent, always and even empty, exactly when the topic is
// keyed, and `cursor` only on a feed that resumes (the topic's cursors are
// the workspace's); no other parameter is allowed. A parameter the topic
// does not take, one given twice, a required key missing or empty, or a
// malformed query answers 400 (ParseFeedQuery). A feed is answered 200
// with Content-Type text/event-stream and Cache-Control no-cache, then
// flushed at once so the Hub knows it is accepted (OpenStream). Frames are
// `event: NAME`, `id: CURSOR` for a data event of a feed that resumes, and
// `data: JSON` lines, ended by a blank line (AppendEvent, StreamWriter;
// the Hub reads them with EventReader); a ": keepalive" comment follows
// every DefaultKeepAlive of quiet. Every feed's payloads are `event: data`
// frames (EventData); a feed that resumes also sends `event: open`
// {"cursor":C} first when opened without a cursor, and may end with one
// `event: resync` (DecodeFrame, EncodeFrame). A stream ends when the Hub
// closes it or the child stops (ending it in order). Today's feeds:
//
//	feeds/document?key=KEY       DocumentSnapshot first, then DocumentPatch
//	feeds/inventory              {"type":"conversation.inventory"} at once (the opening tick)
//	feeds/conversation?key=ID[&cursor=C]
//	                             open, then ChatEvents with their cursors, or one resync
//	feeds/activity               {"working":false,"awaiting":false,"shells":0} at once and on every change
//
// KEY is a LiveDocumentKey (the Hub sends the canonical spelling); a bad
// one answers 400, and the document feed answers 503 when it cannot run
// (package docfeed documents the frames). The document feed indexes and
// watches the folder from its first request until the child stops, so a
// workspace nobody reads documents of costs nothing, and readiness never
// waits for indexing. An unknown conversation answers 404
// {"error":"unknown conversation"}. A conversation's resync carries the
// core's ChatResyncEvent for a cursor it cannot resume, or one of reason
// `conversation-closed` when the conversation is closed while the feed
// follows it (the Hub relays it and does not reopen the feed; a 404 at
// open means the same to it). The conversation core (hub/chat) feeds
// them: activity works while a turn runs and awaits while a permission or
// question waits; an inventory tick, with each agent's catalog revision in
// `catalogs`, follows every change of the conversations (ticks written
// while others wait collapse into one); a conversation feed carries the
// conversation's ChatEvents. The workspace chat API is served under
// /s/{ID}/api/chat/ (adapters/child).
//
// Stop: SIGTERM makes the child end its feed streams, stop the document
// feed, shut its server down gracefully within a short bound, remove the
// socket and exit 0. EOF on stdin means the Hub is gone, even killed with
// SIGKILL, and ends the child the same way, unless the child has a
// detach grace: then StopLine on stdin is the polite stop, and the end of
// stdin starts the grace (hold.go). The Hub kills the whole process
// group when its stop grace runs out, so anything the child started goes
// too.
package childproto
