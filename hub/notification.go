package hub

import (
	"crypto/sha256"
	"time"
)

// The records of push notifications: what a workspace session announces
// (a Notification on its notification feed), the devices a user enrolled
// for Web Push (PushDevice) and the journal of deliveries to them
// (PushDelivery). The rules live in hub/notify; the ports in
// ports_notify.go.

// NotificationKind is what a workspace session announces.
type NotificationKind string

// The kinds a session announces.
const (
	// NotifyPermissionPending: an agent asks permission and waits.
	NotifyPermissionPending NotificationKind = "permission-pending"
	// NotifyQuestionPending: an agent asks a question and waits.
	NotifyQuestionPending NotificationKind = "question-pending"
	// NotifyTurnCompleted: a top-level turn ended successfully (never a
	// replay, a failure, a cancel or a subagent's turn).
	NotifyTurnCompleted NotificationKind = "turn-completed"
	// NotifyCredentialApproval: the Hub holds a use of a credential
	// until its owner allows or denies it (the Hub announces it itself,
	// not a session).
	NotifyCredentialApproval NotificationKind = "credential-approval"
)

// NotificationCategory is what a device chooses to receive.
type NotificationCategory string

// The categories.
const (
	CategoryNeedsAnswer NotificationCategory = "needsAnswer"
	CategoryCompleted   NotificationCategory = "completed"
)

// Category is the category of kind k; "" for a kind no category has.
func (k NotificationKind) Category() NotificationCategory {
	switch k {
	case NotifyPermissionPending, NotifyQuestionPending, NotifyCredentialApproval:
		return CategoryNeedsAnswer
	case NotifyTurnCompleted:
		return CategoryCompleted
	}
	return ""
}

// Notification is one occurrence a workspace session announces: one
// permission request, one question, one finished turn. Its ID is the same
// every time the session tells of the same occurrence (in a snapshot, then
// again after a reconnect), and differs between occurrences, so one
// occurrence is delivered at most once per device.
type Notification struct {
	// ID is the occurrence's identity, at most 512 bytes: built by the
	// session from the agent, the conversation, the kind and SourceID.
	ID string
	// ConversationID is the conversation it happened in.
	ConversationID string
	// SourceID is the request's or the turn's id in the conversation.
	SourceID string
	Kind     NotificationKind
	// CreatedAt is when it happened, by the session's clock.
	CreatedAt time.Time
}

// NotificationFrameType is what one frame of a notification feed says.
type NotificationFrameType int

// The frames of a notification feed.
const (
	// NoticeSnapshot lists every occurrence still pending (questions and
	// permission requests awaiting an answer); it comes first when the
	// feed was opened without a cursor (Reason "initial") or with one the
	// session could not resume from (Reason "gap").
	NoticeSnapshot NotificationFrameType = iota + 1
	// NoticeEvent announces one new occurrence.
	NoticeEvent
	// NoticeResolved says the occurrence with this ID no longer waits
	// (answered, cancelled, or its conversation ended).
	NoticeResolved
	// NoticeReady says the feed has caught up: what follows is new.
	NoticeReady
)

// NotificationFrame is one frame of a session's notification feed. Every
// frame carries the cursor to resume after it.
type NotificationFrame struct {
	Type   NotificationFrameType
	Cursor string
	// Reason is "initial" or "gap" on a NoticeSnapshot.
	Reason string
	// Pending is a NoticeSnapshot's list.
	Pending []Notification
	// Notification is a NoticeEvent's occurrence, or the resolved one's
	// ID and ConversationID on NoticeResolved.
	Notification Notification
}

// PushDevice is one browser a user enrolled for Web Push.
type PushDevice struct {
	// ID is the device's id: a UUID the Hub gave it, or one a client
	// kept from an earlier enrollment (at most 128 characters).
	ID   string
	User string
	// DeviceSession is the digest of the login the device was enrolled
	// under: once that login ends, nothing more is sent to it.
	DeviceSession DeviceSessionDigest
	// Subscription is the browser's push subscription (endpoint and keys,
	// PushSubscription) sealed by the KeyVault: the store never holds an
	// endpoint or a key in the clear.
	Subscription []byte
	// EndpointDigest is the SHA-256 digest of the endpoint, which finds
	// the device enrolled with a given subscription.
	EndpointDigest [sha256.Size]byte
	// WorkspaceIDs is the explicit selection, kept while AllWorkspaces
	// is on.
	WorkspaceIDs  []string
	AllWorkspaces bool
	NeedsAnswer   bool
	Completed     bool
	// Cutoffs say, per workspace and category, since when occurrences
	// count: an occurrence created before its cutoff is history and is
	// never sent.
	Cutoffs   []PushCutoff
	CreatedAt time.Time
	// LastSentAt is when a push service last accepted a message for the
	// device, LastAckAt when the device's service worker last told the
	// Hub it showed one; zero when never.
	LastSentAt time.Time
	LastAckAt  time.Time
}

// PushCutoff is one cutoff of a device.
type PushCutoff struct {
	WorkspaceID string
	Category    NotificationCategory
	Since       time.Time
}

// PushDeliveryKey is a delivery's identity: at most one delivery per
// (workspace, device, notification).
type PushDeliveryKey struct {
	WorkspaceID    string
	DeviceID       string
	NotificationID string
}

// PushDeliveryState is where a delivery stands.
type PushDeliveryState string

// The delivery states: pending and held are unsent; the others are
// settled and kept only so the same occurrence is never delivered twice.
const (
	DeliveryPending   PushDeliveryState = "pending"   // to be sent at NextAt
	DeliveryHeld      PushDeliveryState = "held"      // a needsAnswer waiting for its user to be away
	DeliverySent      PushDeliveryState = "sent"      // a push service accepted it
	DeliveryDiscarded PushDeliveryState = "discarded" // not to be sent (answered, present, expired, removed)
)

// Settled reports whether s is final.
func (s PushDeliveryState) Settled() bool { return s == DeliverySent || s == DeliveryDiscarded }

// PushDelivery is one entry of the delivery journal.
type PushDelivery struct {
	Key          PushDeliveryKey
	Notification Notification
	State        PushDeliveryState
	// CreatedAt is when the Hub journaled it; HeldAt and ReleasedAt when
	// it was held and released (zero when not); NextAt when the next
	// attempt is due; Deadline after which it is discarded unsent;
	// SettledAt when it was settled.
	CreatedAt, HeldAt, ReleasedAt, NextAt, Deadline, SettledAt time.Time
	// Attempts counts the sends tried.
	Attempts int
}

// NotificationState is what a client learns of push on this Hub: whether
// it is configured, its VAPID public key, and one of the caller's
// devices, never a subscription's endpoint or keys.
type NotificationState struct {
	Configured bool
	PublicKey  []byte // nil when not configured
	Device     *NotificationDeviceView
}

// NotificationDeviceView is one of the caller's devices as clients see
// it.
type NotificationDeviceView struct {
	ID            string
	AllWorkspaces bool
	WorkspaceIDs  []string
	NeedsAnswer   bool
	Completed     bool
	// Active: enrolled under the caller's current login, and covering at
	// least one registered workspace.
	Active bool
	// LastSentAt and LastAcknowledgedAt are zero when never.
	LastSentAt, LastAcknowledgedAt time.Time
}
