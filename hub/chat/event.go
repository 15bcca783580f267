package chat

import (
	"encoding/base64"
	"encoding/json"
	"errors"
)

// The ChatEvent types.
const (
	EventItemUpsert    = "item.upsert"
	EventItemRemove    = "item.remove"
	EventTextDelta     = "item.text_delta"
	EventStatus        = "conversation.status"
	EventConfiguration = "conversation.configuration"
	EventUpdated       = "conversation.updated"
	EventQueue         = "conversation.queue"
	EventResync        = "resync"
)

// Event is one ChatEvent (or, with Type EventResync, a ChatResyncEvent):
// the common fields, then the fields of its type.
type Event struct {
	Generation     string `json:"generation"`
	Sequence       int64  `json:"sequence"`
	ConversationID string `json:"conversationId"`
	Type           string `json:"type"`

	Item          *Item            `json:"item,omitempty"`
	ItemID        string           `json:"itemId,omitempty"`
	Delta         string           `json:"delta,omitempty"`
	Status        Status           `json:"status,omitempty"`
	Message       string           `json:"message,omitempty"`
	Configuration *Configuration   `json:"configuration,omitempty"`
	Conversation  *Summary         `json:"conversation,omitempty"`
	Queued        *[]QueuedMessage `json:"queued,omitempty"`
	Change        *QueueChange     `json:"change,omitempty"`
	Reason        string           `json:"reason,omitempty"`
}

// Status is a conversation's status (ConversationStatus).
type Status string

// The statuses this core enters (see the package comment).
const (
	StatusIdle        Status = "idle"
	StatusRunning     Status = "running"
	StatusCompacting  Status = "compacting"
	StatusCompleted   Status = "completed"
	StatusInterrupted Status = "interrupted"
	StatusFailed      Status = "failed"
)

// Configuration is a conversation's ConversationConfiguration: absent
// fields are unknown or agent-controlled.
type Configuration struct {
	Model   string `json:"model,omitempty"`
	Mode    string `json:"mode,omitempty"`
	Variant string `json:"variant,omitempty"`
}

// Summary is a ConversationSummary. Times are epoch milliseconds.
type Summary struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt int64     `json:"createdAt"`
	UpdatedAt int64     `json:"updatedAt"`
	Status    Status    `json:"status"`
	Agent     AgentName `json:"agent"`
}

// AgentName names a conversation's agent in a Summary.
type AgentName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// QueuedMessage is a held message (QueuedMessage): its attachments are
// described, never carried.
type QueuedMessage struct {
	ID          string           `json:"id"`
	Text        string           `json:"text"`
	QueuedAt    int64            `json:"queuedAt"`
	RequestID   string           `json:"requestId,omitempty"`
	Attachments []AttachmentInfo `json:"attachments,omitempty"`
}

// QueueChange says what changed the held queue.
type QueueChange struct {
	Kind      string `json:"kind"` // held, removed or delivered
	MessageID string `json:"messageId"`
}

// Cursor is a position in one conversation's events: the sequence of the
// last event seen in one generation. Its text form (String) is opaque to
// clients and the Hub: base64url (unpadded) of {"v":1,"g":G,"s":S}.
type Cursor struct {
	Generation string
	Sequence   int64
}

type cursorJSON struct {
	V int    `json:"v"`
	G string `json:"g"`
	S *int64 `json:"s"`
}

// String encodes c.
func (c Cursor) String() string {
	b, _ := json.Marshal(cursorJSON{V: 1, G: c.Generation, S: &c.Sequence})
	return base64.RawURLEncoding.EncodeToString(b)
}

// errBadCursor refuses a cursor text that is not one of ours.
var errBadCursor = errors.New("invalid cursor")

// ParseCursor decodes a cursor's text form; anything String did not make
// is refused.
func ParseCursor(s string) (Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, errBadCursor
	}
	var c cursorJSON
	if json.Unmarshal(b, &c) != nil || c.V != 1 || c.G == "" || c.S == nil || *c.S < 0 {
		return Cursor{}, errBadCursor
	}
	return Cursor{Generation: c.G, Sequence: *c.S}, nil
}
