package hub

import (
	"context"
	"net"
)

// The workspace-session port: the Backend that starts a workspace's
// session (its child) and what a running session offers the Hub.

// Backend runs workspace sessions: one child per running workspace.
// Methods are safe for concurrent use.
type Backend interface {
	// Name is the backend's name as workspaces report it ("local").
	Name() string
	// Start launches the session of one workspace and returns once the
	// session answers, or fails within ctx's deadline. A failure is an error
	// whose public message (MessageOf) says why without secrets or output
	// of the child; nothing is left running after a failure. Starting a
	// workspace whose session still runs is a Conflict error (the core never
	// does). When ctx ends first the error satisfies errors.Is(err,
	// ctx.Err()).
	Start(ctx context.Context, spec WorkspaceSessionSpec) (WorkspaceSession, error)
	// RemoveWorkspaceData removes what the backend keeps for workspace id
	// across its sessions (the local backend's data directory, where the
	// child keeps the conversation inventory), once the workspace has left
	// the registry. Removing what is not there succeeds, so a removal cut
	// short can be done again; a session of id still running is a
	// Conflict (the core never does that).
	RemoveWorkspaceData(ctx context.Context, id string) error
}

// WorkspaceSessionSpec says what session to start.
type WorkspaceSessionSpec struct {
	WorkspaceID string
	Path        string // the workspace folder, absolute and canonical
	// Credentials is what the session is lent (sessioncredentials.go);
	// the backend projects it into the session's environment, and
	// removes every ambient credential whatever it holds.
	Credentials SessionCredentials
}

// WorkspaceSession is one started session. Methods are safe for concurrent
// use.
type WorkspaceSession interface {
	// Facts asks the session for its current facts. A session that does
	// not answer within ctx returns an Unavailable error.
	Facts(ctx context.Context) (WorkspaceSessionFacts, error)
	// Dial opens a connection to the session's internal HTTP endpoint, to
	// which the Hub forwards /s/{workspaceId}/ requests. An ended or
	// unreachable session is an Unavailable error.
	Dial(ctx context.Context) (net.Conn, error)
	// Done is closed once the session has ended, whether by Stop or on its
	// own.
	Done() <-chan struct{}
	// Stop ends the session and returns once it is gone: politely first,
	// then forcibly after a bounded grace, which ctx may cut short; the
	// forced end is still awaited for a bounded time. Stopping an ended
	// session is a no-op. An error means the end could not be confirmed.
	Stop(ctx context.Context) error
	// OpenFeed opens one upstream of the live stream: the frames the
	// session produces for one topic and key (FeedRequest). It returns
	// once the session has accepted the feed, or fails within ctx: a feed
	// the session does not have (an unknown conversation, a topic it does
	// not serve) is NotFound, anything else (ended, unreachable, refused)
	// is Unavailable. The feed outlives ctx; Close releases it.
	OpenFeed(ctx context.Context, req FeedRequest) (Feed, error)
	// AgentLoginChanged tells the session that the login of the coding
	// agent with this id changed on the Hub machine (a login, a logout,
	// another account made active). The session re-reads that agent's
	// availability: it forgets a remembered login-required, and the
	// agent's catalog revision in the inventory moves, so an inventory
	// event fires. The agent's running connection, which may hold the old
	// login in memory, is restarted once no turn of it runs, never
	// interrupting a running turn: the next prompt uses a fresh agent,
	// which reads its store. An agent id the session does not know is no
	// change (nil). It returns once the session has taken the change,
	// not once the old agent is gone; an ended or unreachable session, or
	// one that does not answer within ctx, is Unavailable.
	AgentLoginChanged(ctx context.Context, agent string) error
	// NotificationSource opens the session's notification feed: what its
	// agents ask and finish, for Web Push (ports_notify.go).
	NotificationSource
}

// EndReporter is implemented by a WorkspaceSession that can say why it
// ended on its own (its Done closed without a Stop): a host that stayed
// unreachable, a child that exited. The reason is a public sentence in
// the user's terms, shown with the stopped workspace; "" when it has none.
type EndReporter interface {
	EndReason() string
}

// FeedRequest says which upstream to open.
type FeedRequest struct {
	// Topic is TopicDocument, TopicInventory, TopicConversation or
	// TopicActivity (the Hub's own watch of the session's activity).
	Topic Topic
	// Key is the document watch context in its canonical form
	// (DocumentContext.String) or the conversation id; "" otherwise.
	Key string
	// Cursor, for a conversation only, resumes after the event with this
	// session cursor; "" starts at the head.
	Cursor string
}

// Feed is an open upstream. Frames arrive in the order the session
// produced them.
//
// Contract, per topic, of the frames Next returns:
//   - document: FrameData with a DocumentUpdate, the first a snapshot;
//   - inventory: FrameData with a ConversationInventoryEvent, the first
//     sent at once (the opening tick);
//   - conversation: FrameOpen carrying the head cursor first when opened
//     without a cursor, then FrameData with a ChatEvent and its cursor, or
//     one FrameResync with a ChatResyncEvent after which the feed ends;
//   - activity: FrameData with {"working":bool,"awaiting":bool} at once and
//     on every change, and, from a child that has shells, "shells": the
//     revision of its shells (an integer from 0 that moves whenever a
//     shell opens, closes, is renamed or gains or loses its last client,
//     so the Hub reads the facts again).
type Feed interface {
	// Next waits for the next frame. It returns an error once the feed
	// has ended (io.EOF when the session ended it in order, including
	// after a FrameResync), when ctx ends (ctx's error) or after Close.
	// Only one goroutine may call Next.
	Next(ctx context.Context) (FeedFrame, error)
	// Close releases the upstream, so the session stops producing it. It
	// may be called more than once and concurrently with Next.
	Close()
}

// FrameKind is what a feed frame carries.
type FrameKind int

// The kinds of feed frames.
const (
	FrameData FrameKind = iota
	FrameOpen
	FrameResync
)

// FeedFrame is one frame of a feed.
type FeedFrame struct {
	Kind FrameKind
	// Cursor is the session's cursor of a conversation event (FrameData)
	// or head (FrameOpen); "" for other topics.
	Cursor string
	// Data is the frame's JSON payload; nil on FrameOpen.
	Data []byte
}

// WorkspaceSessionFacts are what a running session reports about itself.
type WorkspaceSessionFacts struct {
	WorkspaceAPIRevision int
	Shells               []Shell
}

// Shell is one terminal of a running session.
type Shell struct {
	Attached bool
	Label    string
}
