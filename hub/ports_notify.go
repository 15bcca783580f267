package hub

import (
	"context"
	"time"
)

// The push-notification ports: the Pusher that delivers Web Push
// messages, the store of devices, deliveries and feed cursors, and a
// running session's notification feed. The records are in
// notification.go; the rules in hub/notify.

// Pusher delivers Web Push messages (RFC 8030) encrypted for the
// subscriber (RFC 8291, aes128gcm) and signed for the Hub (RFC 8292,
// VAPID).
//
// Contract:
//   - Configured is false when the operator set no contact; then
//     PublicKey is nil and Push fails with an Unavailable error. The key
//     pair is the Hub's for good: the same public key on every start, so
//     subscriptions made against it keep working.
//   - Push sends one message and reports how the push service answered
//     (PushResult). Each call encrypts with a fresh key and salt. It
//     follows no redirect, waits at most 10 s, and an error (a network
//     failure, a redirect, a timeout, ctx ending) means the service's
//     answer is unknown: the caller may try again with the same message.
//   - Nothing it returns or logs carries the endpoint, the subscription's
//     keys, the payload or the private key.
//   - Methods are safe for concurrent use.
type Pusher interface {
	Configured() bool
	// PublicKey is the VAPID public key: the 65-byte uncompressed P-256
	// point. The slice is the caller's.
	PublicKey() []byte
	Push(ctx context.Context, sub PushSubscription, msg PushMessage) (PushResult, error)
}

// MsgPushNotConfigured is a Pusher's refusal while the operator set no
// contact: it says what to set.
const MsgPushNotConfigured = "push is not configured: set --push-contact (WHARF_PUSH_CONTACT) to a mailto: or https: address"

// PushSubscription is a browser's push subscription.
type PushSubscription struct {
	// Endpoint is the https URL of the push service for this browser.
	Endpoint string
	// P256DH is the browser's public key, an uncompressed P-256 point
	// (65 bytes); Auth its 16-byte authentication secret.
	P256DH, Auth []byte
}

// PushMessage is one message to send.
type PushMessage struct {
	// Payload is encrypted for the subscriber (at most 3,993 bytes, so
	// the record fits the 4,096 every push service takes).
	Payload []byte
	// TTL is how long the push service keeps it for an offline device,
	// rounded down to seconds; 0 means deliver now or drop.
	TTL time.Duration
	// Urgency is RFC 8030's: "very-low", "low", "normal" or "high".
	Urgency string
	// Topic, when set, replaces an undelivered earlier message with the
	// same topic (RFC 8030 §5.4): at most 32 base64url characters.
	Topic string
}

// PushOutcome is how a push service answered.
type PushOutcome int

// The outcomes.
const (
	// PushAccepted: a 2xx; the service took the message.
	PushAccepted PushOutcome = iota + 1
	// PushGone: 404 or 410; the subscription no longer exists.
	PushGone
	// PushRetry: 429 or 5xx; try again, no sooner than RetryAfter when it
	// is set.
	PushRetry
	// PushRejected: another 4xx (a bad VAPID signature, a message too
	// large); trying again at once would not help.
	PushRejected
)

// PushResult is a push service's answer.
type PushResult struct {
	Outcome PushOutcome
	// Status is the HTTP status the service answered.
	Status int
	// RetryAfter is the service's Retry-After (PushRetry only), capped at
	// 300 s; zero when it gave none.
	RetryAfter time.Duration
}

// NotificationStore holds the enrolled devices, the delivery journal and,
// per workspace, the cursor of its notification feed the Hub has read up
// to. Returned values are copies owned by the caller.
//
// Deleting a user deletes its devices and their deliveries; deleting a
// workspace deletes its deliveries and its cursor (its cutoffs stay in the
// devices, which the Hub trims itself).
type NotificationStore interface {
	// PushDevices returns every device, in creation order.
	PushDevices() ([]PushDevice, error)
	// PutPushDevice stores d, replacing the device with its ID. Its user
	// must exist (NotFound otherwise); an EndpointDigest another device
	// holds is a Conflict.
	PutPushDevice(d PushDevice) error
	// DeletePushDevice removes device id and its deliveries, reporting
	// whether it was there.
	DeletePushDevice(id string) (bool, error)

	// PushDeliveries returns every delivery, oldest CreatedAt first.
	PushDeliveries() ([]PushDelivery, error)
	// PutPushDelivery stores d, replacing the delivery with its key. Its
	// device and workspace must exist (NotFound otherwise).
	PutPushDelivery(d PushDelivery) error
	// DeletePushDelivery removes the delivery with key k; removing an
	// absent one is not an error.
	DeletePushDelivery(k PushDeliveryKey) error

	// NotificationCursors returns the stored cursor of every workspace
	// that has one, in a map the caller owns.
	NotificationCursors() (map[string]string, error)
	// PutNotificationCursor stores cursor for workspace ws ("" removes
	// it). The workspace must exist (NotFound otherwise).
	PutNotificationCursor(ws, cursor string) error
}

// NotificationFeed is a running session's notification feed: the
// occurrences it announces, from a cursor.
//
// Contract: opened without a cursor, or with one the session cannot
// resume from, the first frame is a NoticeSnapshot (Reason "initial" or
// "gap"); opened with a cursor it can resume from, the frames after it
// follow. Either way a NoticeReady follows once the feed has caught up,
// then new NoticeEvent and NoticeResolved frames as they happen. Frames
// arrive in order; each cursor resumes after its frame.
type NotificationFeed interface {
	// Next waits for the next frame. It returns an error once the feed
	// has ended (io.EOF when the session ended it in order), when ctx ends
	// (ctx's error) or after Close. Only one goroutine may call Next.
	Next(ctx context.Context) (NotificationFrame, error)
	// Close releases the feed. It may be called more than once and
	// concurrently with Next.
	Close()
}

// NotificationSource is the part of a WorkspaceSession that announces
// notifications.
type NotificationSource interface {
	// OpenNotifications opens the session's notification feed, resuming
	// after cursor ("" for a snapshot). It returns once the session has
	// accepted the feed or fails within ctx; an ended, unreachable or
	// refusing session is Unavailable. It never starts an agent. The feed
	// outlives ctx; Close releases it.
	OpenNotifications(ctx context.Context, cursor string) (NotificationFeed, error)
}
