package chat

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// The contract's limits on workspace payloads (Limits: conversation rename
// title, chat attachments, held message queue).
const (
	MaxTitleBytes      = 200
	MaxAttachments     = 8
	MaxAttachmentBytes = 10 << 20
	MaxHeldMessages    = 20
	MaxHeldTextBytes   = 256 << 10
	// MaxHeldImageBytes is Wharf's own bound on the images held messages
	// carry (the contract bounds their text): without it 20 held messages
	// of 8 images of 10 MiB would keep 1.6 GiB in the child.
	MaxHeldImageBytes = 64 << 20
	// MaxWorkspaceHeldBytes bounds the held messages of all conversations
	// of a workspace together, text and images (Wharf's own): two
	// conversations' images at their bound. Without it 8 conversations
	// holding 60 MiB each took the child past 2.5 GiB.
	MaxWorkspaceHeldBytes = 128 << 20
	// MaxMessageTextBytes bounds a message's text (Wharf's own): a
	// prompt is what a person types or pastes, and 1 MiB is about 250,000
	// tokens, more than the context of the agents this runs. The request
	// body may be 120 MiB for the images.
	MaxMessageTextBytes  = 1 << 20
	maxRememberedRequest = 64 // request ids remembered per conversation, for retries
)

// Attachment is an image sent with a message.
type Attachment struct {
	Name     string
	MimeType string // as the client declared it; the bytes decide
	Data     []byte
}

// Message is what a client sends to a conversation.
type Message struct {
	Text        string
	Attachments []Attachment
	// RequestID, when set, makes the send idempotent: a second send with
	// the same id answers the first one's result and changes nothing.
	RequestID string
}

// imageType sniffs the image formats the contract allows from their magic
// numbers; "" for anything else.
func imageType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "image/gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// checkMessage validates m against the attachment rules and returns its
// images with the types their bytes show: at most 8, each a PNG, JPEG,
// GIF or WebP of at most 10 MiB. A message needs text or an image.
func checkMessage(m Message) ([]AgentImage, []AttachmentInfo, error) {
	if strings.TrimSpace(m.Text) == "" && len(m.Attachments) == 0 {
		return nil, nil, hub.Errorf(hub.Invalid, "message is empty")
	}
	if !utf8.ValidString(m.Text) {
		return nil, nil, hub.Errorf(hub.Invalid, "message text is not UTF-8")
	}
	if len(m.Text) > MaxMessageTextBytes {
		return nil, nil, hub.Errorf(hub.TooLarge, "message text is longer than 1 MiB")
	}
	if len(m.Attachments) > MaxAttachments {
		return nil, nil, hub.Errorf(hub.Invalid, "at most %d images per message", MaxAttachments)
	}
	var images []AgentImage
	var infos []AttachmentInfo
	for i, a := range m.Attachments {
		if len(a.Data) > MaxAttachmentBytes {
			return nil, nil, hub.Errorf(hub.TooLarge, "image %d is larger than 10 MiB", i+1)
		}
		t := imageType(a.Data)
		if t == "" {
			return nil, nil, hub.Errorf(hub.Invalid, "attachment %d is not a PNG, JPEG, GIF or WebP image", i+1)
		}
		images = append(images, AgentImage{MimeType: t, Data: a.Data})
		infos = append(infos, AttachmentInfo{MimeType: t, Size: len(a.Data), Name: a.Name})
	}
	return images, infos, nil
}

// checkTitle trims a conversation title and checks it as display names
// are checked (hub.NormalizeVisibleText: no control, zero-width or bidi
// character, something visible), then its length: at most 200 UTF-8
// bytes once trimmed.
func checkTitle(title string) (string, error) {
	t, err := hub.NormalizeVisibleText("title", title)
	if err != nil {
		return "", err
	}
	if len(t) > MaxTitleBytes {
		return "", hub.Errorf(hub.Invalid, "title is longer than %d bytes", MaxTitleBytes)
	}
	return t, nil
}
