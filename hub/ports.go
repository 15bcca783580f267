package hub

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"time"
)

// This file holds every port of the core: the interfaces through which the
// Hub reaches persistence, time and the file system. Adapters implement them;
// fakes implement them deterministically for tests; fakes/porttest holds one
// conformance suite per port that both must pass.

// Store persists the Hub's records. It is a unit-of-work pair in the style of
// bbolt: a closure receives a Tx and the work commits only when the closure
// returns nil.
//
// Contract:
//   - Update runs fn in a write transaction. If fn returns nil the changes
//     commit atomically and durably before Update returns; if fn returns an
//     error (or panics) nothing fn did is kept and Update returns fn's error
//     unchanged. Updates are serialized: no two overlap.
//   - View runs fn in a read-only transaction that sees one consistent
//     snapshot, never a half-applied Update. A mutating Tx method called
//     inside View fails and changes nothing.
//   - fn must not call another port or keep the Tx after it returns; it may
//     be run with a context already cancelled, in which case Update and View
//     return a non-nil error without committing.
//   - Failures of the store itself are reported as Internal errors whose
//     cause is kept for logs.
//   - Store methods are safe for concurrent use.
type Store interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
	// ExternalGeneration returns a number that changes once another
	// Store sharing the same records (another process: `wharf user`
	// beside a running daemon) has committed an Update, and only then:
	// this Store's own commits leave it as it is. A change is visible
	// here before the other Store's Update returns. It costs no I/O, so
	// the Hub checks it per request to know whether what it keeps in
	// memory of the records (active device sessions) is still current.
	// The value is opaque: compare it only for equality.
	ExternalGeneration() uint64
	// Close releases the store. Calls after Close fail.
	Close() error
}

// Tx is the view of the store inside one unit of work. It is assembled from
// role interfaces, one per family of records.
type Tx interface {
	UserStore
	DeviceSessionStore
	WorkspaceStore
	JournalStore
	PersonalStateStore
	ActivityStore
	SettingStore
}

// UserStore holds the Hub's users. Returned values are copies owned by the
// caller.
type UserStore interface {
	// User returns the user with exactly this name, or a NotFound error.
	User(name string) (User, error)
	// Users returns every user, sorted by name.
	Users() ([]User, error)
	// CountUsers reports how many users exist.
	CountUsers() (int, error)
	// CreateUser adds u. A user with the same name already existing is a
	// Conflict error.
	CreateUser(u User) error
	// SetPasswordHash replaces the password hash of the named user (NotFound
	// if absent).
	SetPasswordHash(name, hash string) error
	// DeleteUser removes the named user and, in the same transaction, every
	// session of that user (NotFound if absent).
	DeleteUser(name string) error
}

// DeviceSessionStore holds device sessions. A session is found by the SHA-256
// digest of its secret id; the secret itself is never stored.
type DeviceSessionStore interface {
	// CreateDeviceSession adds s. Its user must exist (NotFound otherwise); a
	// session with the same digest or handle is a Conflict error.
	CreateDeviceSession(s DeviceSession) error
	// DeviceSessionByDigest returns the session with this digest, revoked and
	// expired ones included, or a NotFound error.
	DeviceSessionByDigest(d DeviceSessionDigest) (DeviceSession, error)
	// ActiveDeviceSessions returns every session neither revoked nor
	// expired at now, in no particular order.
	ActiveDeviceSessions(now time.Time) ([]DeviceSession, error)
	// DeviceSessionsOfUser returns every stored session of the named user, revoked
	// and expired ones included, newest IssuedAt first.
	DeviceSessionsOfUser(name string) ([]DeviceSession, error)
	// RevokeDeviceSession marks the session revoked at the given time. Revoking an
	// already revoked session keeps its first revocation time. NotFound if no
	// session has this digest.
	RevokeDeviceSession(d DeviceSessionDigest, at time.Time) error
	// DeleteDeviceSessionsOfUser removes every session of the named user and
	// reports how many were removed.
	DeleteDeviceSessionsOfUser(name string) (int, error)
	// DeleteExpiredDeviceSessions removes every session whose ExpiresAt is at or
	// before now and reports how many were removed.
	DeleteExpiredDeviceSessions(now time.Time) (int, error)
}

// WorkspaceStore is the workspace registry. Returned values are copies owned
// by the caller.
type WorkspaceStore interface {
	// Workspaces returns every registered workspace in registration order.
	Workspaces() ([]Workspace, error)
	// Workspace returns the workspace with this id, or a NotFound error.
	Workspace(id string) (Workspace, error)
	// WorkspaceIDUsed reports whether id was ever given to a workspace,
	// including one since forgotten: ids are never reused.
	WorkspaceIDUsed(id string) (bool, error)
	// CreateWorkspace registers w after every existing workspace. An id that
	// was ever used, or a path another workspace holds, is a Conflict error.
	CreateWorkspace(w Workspace) error
	// UpdateWorkspace replaces the stored path, display name and AutoStart
	// of the workspace with w's id (NotFound if absent); its position and id
	// never change. A path another workspace holds is a Conflict error.
	UpdateWorkspace(w Workspace) error
	// DeleteWorkspace unregisters the workspace (NotFound if absent) and,
	// in the same transaction, deletes every user's personal state and
	// activity view of it. Its id stays used.
	DeleteWorkspace(id string) error
}

// JournalStore holds recovery journals: the intent of a change to folders
// on disk, written before the disk is touched and deleted once the change
// and the registry agree. The payload is opaque to the store.
type JournalStore interface {
	// Journals returns every pending journal, oldest (lowest ID) first.
	Journals() ([]Journal, error)
	// AddJournal stores j (its ID is ignored) and returns the ID it was
	// given; IDs increase and are never reused.
	AddJournal(j Journal) (int64, error)
	// DeleteJournal removes the journal with this ID (NotFound if absent).
	DeleteJournal(id int64) error
}

// PersonalStateStore holds each user's personal state in each workspace
// (the activity acknowledgements live in ActivityStore). Writes need the
// user and the workspace to exist (NotFound otherwise); reads of an absent
// state, for whatever reason, return the zero value. Deleting a user or a
// workspace deletes its states.
type PersonalStateStore interface {
	// PersonalState returns the stored state of user in workspace, or the
	// zero PersonalState when none is stored.
	PersonalState(user, workspaceID string) (PersonalState, error)
	// PutPersonalState replaces the stored state of user in workspace.
	PutPersonalState(user, workspaceID string, st PersonalState) error
}

// ActivityStore holds the marks behind the activity topic's per-user
// `finished` flag: when each workspace was last seen finishing work, and
// when each user last acknowledged it. Marks are stamps of one counter the
// Hub keeps, never wall-clock times, so they survive a restart in order.
// Deleting a user deletes its view marks; deleting a workspace deletes
// every mark of it.
type ActivityStore interface {
	// ActivityMarks returns every stored mark, in no particular order.
	ActivityMarks() ([]ActivityMark, error)
	// PutActivityMark stores m, replacing the mark of the same workspace
	// and user. The workspace, and for a view mark the user, must exist
	// (NotFound otherwise).
	PutActivityMark(m ActivityMark) error
	// DeleteActivityMark removes the mark of the workspace and user (""
	// for the finish mark); removing an absent mark is not an error.
	DeleteActivityMark(workspaceID, user string) error
	// DeleteActivityMarks removes every mark of the workspace.
	DeleteActivityMarks(workspaceID string) error
}

// ActivityMark is one stored mark: a workspace's finish (User "") or one
// user's acknowledgement of it.
type ActivityMark struct {
	WorkspaceID string
	User        string
	Stamp       uint64
}

// SettingStore holds Hub-wide settings as text under fixed keys.
type SettingStore interface {
	// Setting returns the value under key and whether one is stored.
	Setting(key string) (string, bool, error)
	// PutSetting stores value under key, replacing any earlier value.
	PutSetting(key, value string) error
	// DeleteSetting removes key; removing an absent key is not an error.
	DeleteSetting(key string) error
}

// GitRunner performs the Git operations the core needs, as semantic calls
// rather than command lines. Implementations never decide anything from
// git's human-readable (and translated) messages. Methods are safe for
// concurrent use and honour ctx.
type GitRunner interface {
	// Inspect describes the Git checkout that contains dir (dir itself or
	// an ancestor). For a directory that is in no repository it returns a
	// zero Repository and a nil error. When git cannot tell (git missing,
	// timed out, refused the directory as unsafe, a broken repository) it
	// returns an error, and the caller treats the answer as unknown. A dir
	// that does not exist is an error satisfying errors.Is(err,
	// fs.ErrNotExist); a relative dir is Invalid.
	Inspect(ctx context.Context, dir string) (Repository, error)
	// Init creates an empty repository in the existing directory dir; it
	// never creates dir. Init of a repository leaves it as it is.
	Init(ctx context.Context, dir string) error
}

// Repository describes a Git checkout.
type Repository struct {
	// TopLevel is the absolute root of the checkout's work tree; "" means
	// dir is in no repository.
	TopLevel string
	// CommonDir is the absolute Git directory shared by a main checkout and
	// its linked worktrees.
	CommonDir string
	// Branch is the short name of the checked-out branch, "" when HEAD is
	// detached.
	Branch string
}

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
//     on every change.
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

// Clock is the only source of time in the core, so tests can move time by
// hand. Implementations are safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc arranges for f to be called once d has elapsed, unless the
	// returned Timer is stopped first. f may run on any goroutine, so it
	// must not need a lock its scheduler holds. A non-positive d fires as
	// soon as possible.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started and reports whether it
	// did so.
	Stop() bool
}

// FS is the file-system surface the core needs for folders on the Hub
// host. Paths are absolute and already validated by the core.
//
// Errors satisfy errors.Is with fs.ErrNotExist (a path or its parent is
// absent), fs.ErrExist (the target already exists), fs.ErrPermission
// (the OS refused), ErrNotEmpty (a directory holds entries) or ErrNotDir. Other
// failures are returned as they are. Methods are safe for concurrent use;
// the core serializes conflicting mutations itself.
type FS interface {
	// Lstat describes path without following a final symbolic link.
	Lstat(path string) (fs.FileInfo, error)
	// ReadDir lists the entries of the directory path, sorted by name.
	ReadDir(path string) ([]fs.DirEntry, error)
	// Mkdir creates the directory path (mode 0755 before umask) and makes
	// the new entry durable. It never replaces anything: an existing path is
	// fs.ErrExist.
	Mkdir(path string) error
	// RenameNoReplace renames the directory oldpath to newpath atomically,
	// durably, and never replacing an existing newpath (fs.ErrExist).
	RenameNoReplace(oldpath, newpath string) error
	// RemoveEmpty removes the directory path only when it is empty
	// (ErrNotEmpty otherwise). A file or a symbolic link is ErrNotDir and
	// is left alone.
	RemoveEmpty(path string) error
	// EvalSymlinks returns path with every symbolic link resolved.
	EvalSymlinks(path string) (string, error)
	// Home returns the home directory of the Hub's OS user.
	Home() (string, error)
}

// AgentRuntime runs the coding agents of one workspace session (Claude
// Code, Codex, Gemini CLI, OpenCode, or any command configured as an
// agent). The session child's conversation core (package hub/chat) drives
// it; the Hub itself never does. Methods are safe for concurrent use.
type AgentRuntime interface {
	// Agents lists every agent the runtime knows, in a stable order, and
	// whether each could start now. It never starts one, so it is cheap
	// enough to call on every listing.
	Agents() []AgentDescriptor
	// Start starts the agent with this id for the workspace folder dir and
	// initializes it. Everything the agent reports about any of its
	// sessions goes to sink until the connection ends. An unknown id is
	// NotFound; an agent that is not installed is a Conflict error
	// satisfying errors.Is(err, ErrAgentNotInstalled); one that fails to
	// start or to answer `initialize` within ctx is Unavailable, with a
	// public message that quotes nothing of its output. Nothing is left
	// running after a failure.
	Start(ctx context.Context, agentID, dir string, sink AgentSink) (AgentConnection, error)
}

// ErrAgentNotInstalled marks an agent whose command was not found.
var ErrAgentNotInstalled = errors.New("agent not installed")

// ErrAgentLoginRequired marks an agent that refused a request until it is
// logged in (ACP's -32000 answer). Errors carrying it are Conflict errors
// whose public message names the agent and how to log in.
var ErrAgentLoginRequired = errors.New("agent login required")

// AgentAvailability says whether an agent could start.
type AgentAvailability string

// The availabilities of agents.
const (
	AgentAvailable    AgentAvailability = "available"
	AgentNotInstalled AgentAvailability = "not-installed"
)

// AgentDescriptor describes one agent the runtime knows.
type AgentDescriptor struct {
	ID           string // never contains ':'; names conversations `<id>:<session>`
	Name         string // for people
	Availability AgentAvailability
}

// AgentSink receives what a connection's agent reports, one call at a
// time, in the order the agent sent it. The sink must return promptly and
// never block on I/O: it runs on the goroutine that reads the agent, which
// stops reading (and so stops the agent writing) while it runs.
type AgentSink func(sessionID string, u AgentUpdate)

// AgentConnection is one started agent, which may hold several sessions.
// Every method that talks to the agent honours ctx; once the connection
// has ended they fail with Unavailable errors.
type AgentConnection interface {
	// Info is what the agent said of itself at `initialize`.
	Info() AgentInfo
	// NewSession starts a session in dir. A refusal until the agent is
	// logged in satisfies errors.Is(err, ErrAgentLoginRequired).
	NewSession(ctx context.Context, dir string) (AgentSessionState, error)
	// LoadSession reopens an earlier session in dir. The agent replays the
	// session's history through the sink before LoadSession returns.
	// Conflict when Info().LoadSession is false; NotFound when the agent no
	// longer knows the session.
	LoadSession(ctx context.Context, sessionID, dir string) (AgentSessionState, error)
	// ListSessions lists the agent's sessions in dir (Conflict when
	// Info().ListSessions is false).
	ListSessions(ctx context.Context, dir string) ([]AgentSessionSummary, error)
	// Prompt runs one turn and returns once it ends, after every update the
	// agent sent during it reached the sink. Errors are the turn's failure:
	// ErrAgentLoginRequired, the connection ending (Unavailable), or the
	// agent's refusal of the request.
	Prompt(ctx context.Context, sessionID string, p AgentPrompt) (AgentTurnResult, error)
	// Cancel asks the agent to end the session's turn; the turn's Prompt
	// then returns with AgentStopCancelled. Requests of the turn still
	// waiting for an answer are settled as cancelled (AgentRequestSettled).
	Cancel(ctx context.Context, sessionID string) error
	// AnswerPermission answers a pending AgentPermissionRequest with one
	// of its options. NotFound when no such request is pending any more.
	AnswerPermission(requestID, optionID string) error
	// AnswerQuestion answers a pending AgentQuestionRequest. NotFound when
	// no such request is pending any more.
	AnswerQuestion(requestID string, a AgentAnswer) error
	// SetModel and SetMode change the session's configuration to a model
	// or mode the agent offered (AgentSessionState); an unknown one is
	// Invalid.
	SetModel(ctx context.Context, sessionID, modelID string) error
	SetMode(ctx context.Context, sessionID, modeID string) error
	// Done is closed once the connection has ended: Close, the agent's
	// exit, or a broken stream. Err then says why (nil after Close).
	Done() <-chan struct{}
	Err() error
	// Close ends the agent and everything it started, and returns once
	// they are gone. Pending requests are settled; calls in flight fail.
	Close() error
}

// ConversationStore keeps a workspace's conversation inventory across
// restarts of its session child, in a place private to the workspace.
// Methods are safe for concurrent use.
type ConversationStore interface {
	// LoadConversations returns what SaveConversations last stored, held
	// images with their bytes; none when nothing was stored yet. A held
	// message whose image cannot be read back is left out (logged where
	// the store can), never returned without it.
	LoadConversations() ([]ConversationRecord, error)
	// SaveConversations replaces the stored inventory with records,
	// atomically and durably, held images included: after a crash either
	// the old or the new inventory is read back whole. Images no record
	// holds any more are forgotten.
	SaveConversations(records []ConversationRecord) error
}

// ConversationRecord is what survives of a conversation: its identity,
// title, times and configuration, the agent session that holds its
// history, and what the user sent that the agent has not had yet. Items
// are not kept: the agent replays them (LoadSession).
type ConversationRecord struct {
	ID        string    `json:"id"`
	AgentID   string    `json:"agentId"`
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Model     string    `json:"model,omitempty"`
	Mode      string    `json:"mode,omitempty"`
	// Held are the messages held behind a running turn, in order: a
	// restarted child delivers them.
	Held []HeldMessageRecord `json:"held,omitempty"`
	// Delivering is the message whose turn ran when the record was saved
	// (recorded before it was sent, without its images): after a crash
	// the child says that turn was interrupted, and never sends it again.
	Delivering *HeldMessageRecord `json:"delivering,omitempty"`
	// Sent maps the request ids of the latest sends to their messages, so
	// a send retried across a restart is answered, not delivered twice.
	Sent []SentRecord `json:"sent,omitempty"`
}

// HeldMessageRecord is a message a user sent that waits for the agent.
type HeldMessageRecord struct {
	ID        string      `json:"id"`
	Text      string      `json:"text"`
	QueuedAt  time.Time   `json:"queuedAt"`
	RequestID string      `json:"requestId,omitempty"`
	Images    []HeldImage `json:"images,omitempty"`
}

// HeldImage is an image of a held message. Key names its bytes: 32
// lower-case hex digits, unique, and the same in every save that holds
// the image, so a store may keep the bytes once per key, apart from the
// records (Data is not part of the records' JSON).
type HeldImage struct {
	Key      string `json:"key"`
	MimeType string `json:"mimeType"`
	Name     string `json:"name,omitempty"`
	Data     []byte `json:"-"`
}

// SentRecord is what a send with a request id answered.
type SentRecord struct {
	RequestID string `json:"requestId"`
	MessageID string `json:"messageId"`
	Held      bool   `json:"held"`
}
