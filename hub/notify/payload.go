package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// KindTest is the kind of the message "Send a test" sends: it has no
// occurrence behind it.
const KindTest = "test"

// MaxTitle bounds a payload's title, in characters.
const MaxTitle = 120

// Payload is what a push message carries (the PushPayload schema of
// api/openapi.yaml), encrypted for the device.
type Payload struct {
	Version   int    `json:"version"`
	ID        string `json:"id"`
	Device    string `json:"device"`
	Kind      string `json:"kind"`
	Title     string `json:"title"`
	Body      string `json:"body"`
	URL       string `json:"url"`
	CreatedAt string `json:"createdAt"`
}

// PayloadID is the payload id of delivery key k: the hex SHA-256 of its
// identity, the same on every attempt, so a message a push service
// delivers twice replaces the first notification rather than adding one.
func PayloadID(k hub.PushDeliveryKey) string {
	b, _ := json.Marshal([]string{k.WorkspaceID, k.DeviceID, k.NotificationID})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// PayloadOf builds the payload of d for a workspace shown as title.
func PayloadOf(d hub.PushDelivery, title string) Payload {
	p := Payload{Version: 1, ID: PayloadID(d.Key), Device: d.Key.DeviceID, Kind: string(d.Notification.Kind),
		Title: clip(title, MaxTitle), CreatedAt: d.Notification.CreatedAt.UTC().Format(time.RFC3339Nano)}
	p.URL = "/w/" + url.PathEscape(d.Key.WorkspaceID)
	if d.Notification.ConversationID != "" {
		p.URL += "/c/" + url.PathEscape(d.Notification.ConversationID)
	}
	switch d.Notification.Kind {
	case hub.NotifyTurnCompleted:
		p.Body = "Agent turn finished"
	case hub.NotifyPermissionPending:
		p.Body = "An agent asks for your permission"
	case hub.NotifyQuestionPending:
		p.Body = "An agent needs your answer"
	case hub.NotifyCredentialApproval:
		p.Body = "A credential use waits for your approval"
	default:
		p.Kind, p.Body, p.URL = KindTest, "Notifications from this Hub reach this device", "/settings"
	}
	return p
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
