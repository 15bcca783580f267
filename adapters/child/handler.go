package child

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
	"github.com/wharfhub/wharf/hub/chat"
)

// Revision is the workspace API revision this child speaks. It versions the
// whole internal protocol (adapters/internal/childproto), and the child
// reports it in its facts and its Info.
const Revision = 24

// Info is the body of GET /s/{id}/api/session.
type Info struct {
	WorkspaceID          string `json:"workspaceId"`
	WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
}

// HandlerOptions configure NewHandler. The zero value serves every
// endpoint but the document feed, with the default keepalive.
type HandlerOptions struct {
	// Documents serves childproto.DocumentFeedPath: the workspace folder's
	// docfeed.Feed.Handler (Main starts the feed on first use). nil
	// leaves the path unserved (404), as any unknown path.
	Documents http.Handler
	// KeepAlive is the interval of the ": keepalive" comments of the
	// activity, inventory and conversation feeds; the document feed has
	// its own (docfeed.Options.KeepAlive). Default
	// childproto.DefaultKeepAlive.
	KeepAlive time.Duration
	// Chat is the workspace's conversation core: it serves the chat API
	// under /s/{ID}/api/chat/ and feeds the activity, inventory and
	// conversation feeds. nil: no agent (the feeds say so, the API is 404).
	Chat *chat.Manager
	// Logger receives the chat API's failures. Default discards.
	Logger *slog.Logger
}

// NewHandler returns the child's HTTP handler for the workspace id. Routes
// match the exact, already decoded path and the GET method only; anything
// else is a JSON 404, so the Hub's verbatim forwarding never meets a
// redirect or a plain-text error. Every JSON answer carries Cache-Control:
// no-store; feeds answer text/event-stream (see childproto). Feeds stream
// until the client goes away or the request's context ends: a server that
// must stop ends them through its BaseContext, since a stream never goes
// idle for Shutdown to close it.
func NewHandler(workspaceID string, opts HandlerOptions) http.Handler {
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = childproto.DefaultKeepAlive
	}
	base := "/s/" + workspaceID + "/"
	routes := map[string]http.HandlerFunc{
		childproto.FactsPath: func(w http.ResponseWriter, _ *http.Request) {
			// No terminal support exists yet, so the list is honestly empty.
			childproto.WriteJSON(w, http.StatusOK, childproto.Facts{WorkspaceAPIRevision: Revision, Shells: []childproto.Shell{}})
		},
		base + "api/session": func(w http.ResponseWriter, _ *http.Request) {
			childproto.WriteJSON(w, http.StatusOK, Info{WorkspaceID: workspaceID, WorkspaceAPIRevision: Revision})
		},
		childproto.ActivityFeedPath:     serveActivity(opts.Chat, opts.KeepAlive),
		childproto.InventoryFeedPath:    serveInventory(opts.Chat, opts.KeepAlive),
		childproto.ConversationFeedPath: serveConversation(opts.Chat, opts.KeepAlive),
	}
	if opts.Documents != nil {
		routes[childproto.DocumentFeedPath] = opts.Documents.ServeHTTP
	}
	h := &handler{routes: routes}
	if opts.Chat != nil {
		log := opts.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		h.chatPrefix = base + "api/chat/"
		h.chat = &chatAPI{m: opts.Chat, prefix: h.chatPrefix, log: log}
	}
	return h
}

// handler routes by exact path, and the chat API by prefix.
type handler struct {
	routes     map[string]http.HandlerFunc
	chatPrefix string
	chat       http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f, ok := h.routes[r.URL.Path]; ok && r.Method == http.MethodGet {
		f(w, r)
		return
	}
	if h.chat != nil && strings.HasPrefix(r.URL.Path, h.chatPrefix) {
		h.chat.ServeHTTP(w, r)
		return
	}
	childproto.WriteError(w, http.StatusNotFound, "not found")
}
