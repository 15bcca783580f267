package child

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/chat"
)

// The workspace chat API (workspace revision 24), under
// /s/{ID}/api/chat/, forwarded by the Hub as it is and documented in
// api/openapi.yaml (tag `chat`):
//
//	GET    agents                                   {agents}
//	GET    conversations                            {conversations}
//	POST   conversations                            {agent, title?} → {conversation}
//	GET    conversations/{cid}                      the snapshot and its cursor
//	POST   conversations/{cid}/rename               {title} → {conversation}
//	POST   conversations/{cid}/close                {} → {closed: true}
//	POST   conversations/{cid}/messages             {text, attachments?, requestId?} → 202 SendResult
//	DELETE conversations/{cid}/messages/{mid}       → {queued}
//	POST   conversations/{cid}/cancel               {} → {cancelled: true}
//	POST   conversations/{cid}/permissions/{rid}    {choiceId} → {answered: true}
//	POST   conversations/{cid}/questions/{rid}      {action, content?} → {answered: true}
//	POST   conversations/{cid}/configuration        {model?, mode?, variant?} → {configuration}
//
// Path segments are percent-decoded one by one, so a conversation id may
// hold any character. Bodies are strict JSON objects (unknown fields are
// refused); a message may be 120 MiB (8 images of 10 MiB, in base64),
// other bodies 64 KiB.

// Request body bounds.
const (
	maxChatBody    = 64 << 10
	maxMessageBody = 120 << 20
	// maxUploadBytes bounds the message bodies one workspace reads at
	// once, each counted by its declared length (maxMessageBody when it
	// declares none): one message at the body bound, or many small ones;
	// past it a send answers 429. A body is held whole while it is
	// decoded (about three times its size at the peak), so without a
	// bound concurrent uploads took the child past 2.5 GiB.
	maxUploadBytes = 128 << 20
	// chatCallTimeout bounds an operation that waits for an agent (a new
	// session, a configuration change).
	chatCallTimeout = 2 * time.Minute
)

// chatAPI serves the chat API of one workspace.
type chatAPI struct {
	m       *chat.Manager
	prefix  string // /s/{ID}/api/chat/
	log     *slog.Logger
	uploads uploadBudget
}

// uploadBudget counts the bytes of the message bodies being read, within
// maxUploadBytes.
type uploadBudget struct {
	mu   sync.Mutex
	used int64
}

// take reserves n bytes, reporting whether they fit.
func (b *uploadBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > maxUploadBytes {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes taken.
func (b *uploadBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

func (a *chatAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), a.prefix)
	var seg []string
	for _, s := range strings.Split(rest, "/") {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" {
			a.fail(w, hub.Errorf(hub.NotFound, "not found"))
			return
		}
		seg = append(seg, u)
	}
	method := r.Method
	route := func(m string, n int, first string) bool {
		return method == m && len(seg) == n && seg[0] == first
	}
	sub := func(m, name string) bool {
		return method == m && len(seg) == 3 && seg[0] == "conversations" && seg[2] == name
	}
	switch {
	case route("GET", 1, "agents"):
		childproto.WriteJSON(w, http.StatusOK, map[string]any{"agents": a.m.Agents()})
	case route("GET", 1, "conversations"):
		childproto.WriteJSON(w, http.StatusOK, map[string]any{"conversations": a.m.List()})
	case route("POST", 1, "conversations"):
		var body struct {
			Agent string `json:"agent"`
			Title string `json:"title"`
		}
		if a.decode(w, r, &body, maxChatBody) {
			ctx, cancel := contextFor(r)
			defer cancel()
			s, err := a.m.Create(ctx, body.Agent, body.Title)
			a.answer(w, http.StatusCreated, map[string]any{"conversation": s}, err)
		}
	case route("GET", 2, "conversations"):
		s, err := a.m.Snapshot(seg[1])
		a.answer(w, http.StatusOK, s, err)
	case sub("POST", "rename"):
		var body struct {
			Title string `json:"title"`
		}
		if a.decode(w, r, &body, maxChatBody) {
			s, err := a.m.Rename(seg[1], body.Title)
			a.answer(w, http.StatusOK, map[string]any{"conversation": s}, err)
		}
	case sub("POST", "close"):
		if a.decode(w, r, &struct{}{}, maxChatBody) {
			a.answer(w, http.StatusOK, map[string]any{"closed": true}, a.m.CloseConversation(seg[1]))
		}
	case sub("POST", "messages"):
		a.send(w, r, seg[1])
	case method == "DELETE" && len(seg) == 4 && seg[0] == "conversations" && seg[2] == "messages":
		q, err := a.m.RemoveHeld(seg[1], seg[3])
		a.answer(w, http.StatusOK, map[string]any{"queued": q}, err)
	case sub("POST", "cancel"):
		if a.decode(w, r, &struct{}{}, maxChatBody) {
			ctx, cancel := contextFor(r)
			defer cancel()
			a.answer(w, http.StatusOK, map[string]any{"cancelled": true}, a.m.Cancel(ctx, seg[1]))
		}
	case method == "POST" && len(seg) == 4 && seg[0] == "conversations" && seg[2] == "permissions":
		var body struct {
			ChoiceID string `json:"choiceId"`
		}
		if a.decode(w, r, &body, maxChatBody) {
			a.answer(w, http.StatusOK, map[string]any{"answered": true}, a.m.AnswerPermission(seg[1], seg[3], body.ChoiceID))
		}
	case method == "POST" && len(seg) == 4 && seg[0] == "conversations" && seg[2] == "questions":
		var body chat.Answer
		if a.decode(w, r, &body, maxChatBody) {
			a.answer(w, http.StatusOK, map[string]any{"answered": true}, a.m.AnswerQuestion(seg[1], seg[3], body))
		}
	case sub("POST", "configuration"):
		var body chat.Configuration
		if a.decode(w, r, &body, maxChatBody) {
			ctx, cancel := contextFor(r)
			defer cancel()
			cfg, err := a.m.SetConfiguration(ctx, seg[1], body)
			a.answer(w, http.StatusOK, map[string]any{"configuration": cfg}, err)
		}
	default:
		a.fail(w, hub.Errorf(hub.NotFound, "not found"))
	}
}

// attachment is an image of a sent message: its data is base64, which
// the decoder turns into bytes directly (no copy of the text).
type attachment struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"`
	Name     string `json:"name,omitempty"`
}

// send reads a message within the workspace's upload budget: a body
// declared past maxMessageBody is refused before it is read (413), one
// that does not fit the budget with 429.
func (a *chatAPI) send(w http.ResponseWriter, r *http.Request, id string) {
	n := r.ContentLength
	switch {
	case n > maxMessageBody:
		a.fail(w, hub.Errorf(hub.TooLarge, "request body is larger than %d bytes", maxMessageBody))
		return
	case n < 0:
		n = maxMessageBody
	}
	n = max(n, 1)
	if !a.uploads.take(n) {
		a.fail(w, hub.Errorf(hub.RateLimited, "other messages are being uploaded to this workspace; send again shortly"))
		return
	}
	defer a.uploads.give(n)
	var body struct {
		Text        string       `json:"text"`
		Attachments []attachment `json:"attachments"`
		RequestID   string       `json:"requestId"`
	}
	if !a.decode(w, r, &body, maxMessageBody) {
		return
	}
	msg := chat.Message{Text: body.Text, RequestID: body.RequestID}
	if len(body.Attachments) > chat.MaxAttachments {
		a.fail(w, hub.Errorf(hub.Invalid, "at most %d images per message", chat.MaxAttachments))
		return
	}
	for _, at := range body.Attachments {
		msg.Attachments = append(msg.Attachments, chat.Attachment{Name: at.Name, MimeType: at.MimeType, Data: at.Data})
	}
	ctx, cancel := contextFor(r)
	defer cancel()
	res, err := a.m.Send(ctx, id, msg)
	a.answer(w, http.StatusAccepted, res, err)
}

// contextFor bounds an operation that waits for an agent; it ends with
// the request.
func contextFor(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), chatCallTimeout)
}

// decode reads the body into v as the Hub's own routes do
// (httpjson.Decode: strict, at most max bytes, 413 past it), or answers
// the refusal and returns false.
func (a *chatAPI) decode(w http.ResponseWriter, r *http.Request, v any, max int64) bool {
	if err := httpjson.Decode(r, max, true, v); err != nil {
		a.fail(w, err)
		return false
	}
	return true
}

// answer writes v with status, or err's answer.
func (a *chatAPI) answer(w http.ResponseWriter, status int, v any, err error) {
	if err != nil {
		a.fail(w, err)
		return
	}
	childproto.WriteJSON(w, status, v)
}

// fail answers err: its status and public message; an error without one
// is a 500 whose cause is logged, never sent.
func (a *chatAPI) fail(w http.ResponseWriter, err error) {
	status := httpjson.StatusOf(err)
	msg := hub.MessageOf(err)
	if msg == "" || status == 500 {
		a.log.Error("chat request failed", "err", err)
		status, msg = 500, "internal error"
	}
	childproto.WriteError(w, status, msg)
}
