// Package chat is the conversation core the workspace child runs:
// conversations with coding agents, their items, the ChatEvents that
// describe every change, statuses and their transitions, the held message
// queue, and the per-conversation replay log with {generation, sequence}
// cursors (workspace revision 24, the contract's "Forwarded workspace
// payloads").
//
// It is pure: agents are reached through its own AgentRuntime port, the
// inventory is kept through its ConversationStore port (ports_agent.go;
// the values they carry are in agent.go), and time comes from a
// hub.Clock; it never imports net/http, os/exec or a database, so it runs
// the same in the child (adapters/child over adapters/acp) and in tests
// (over fakes.AgentRuntime and fakes.Clock). Package hub never imports it.
//
// # Shape
//
// A Manager holds every conversation of one workspace. Operations
// (Create, Send, Cancel, AnswerPermission, …) validate their input, change
// the state under one lock and append the ChatEvents they cause to the
// conversation's replay log; calls to agents run outside the lock. What an
// agent reports arrives through the runtime's sink, is mapped to items
// (updates.go) and logged the same way. Readers never get callbacks: a
// feed pulls the events after its cursor (Events) and waits on the
// channel it was given for more, so a slow reader costs the core nothing
// and the log itself is the only buffer.
//
// # Notifications
//
// Besides its conversations' events, the Manager keeps the session's
// notification feed (notices.go): a pending notice per permission request
// or question, its resolution once it no longer waits, and a notice per
// turn that completes, each under an identity that never changes, in a
// log bounded in bytes and age that a reader resumes from its cursor or
// meets as a snapshot of what is pending (Notices).
//
// # Bounds
//
// An agent is untrusted input. Every item is bounded when it is made or
// changed (16 MiB of streamed text, 1 MiB for any other item), every
// conversation as a whole (64 MiB: the oldest items are trimmed, then
// removed), the requests awaiting an answer (32), and the held messages
// (limits.go); what is cut is said in a notice item. Streamed text grows
// in a builder, so a message costs time linear in its length however
// many chunks bring it. See bounds.go.
//
// # Transitions of a conversation's status
//
//	idle        created, or reopened after a restart; no turn has run here
//	running     a turn runs (a message was delivered to the agent)
//	compacting  the agent compacts its context during a turn; back to
//	            running when it reports the compaction ended or goes on
//	completed   the turn ended (end_turn, max_tokens, max_turn_requests)
//	interrupted the turn was cancelled
//	failed      the turn failed: refusal, a login needed, the agent exited
//	            or broke the protocol (a notice item says which)
//
// When a turn ends and messages are held, the first is delivered at once
// (its own turn). `sending`, `retrying`, `background` and `scheduled` are
// never entered: ACP has no source for them.
package chat
