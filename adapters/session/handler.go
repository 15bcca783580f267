package session

import (
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
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
	// activity and inventory feeds; the document feed has its own
	// (docfeed.Options.KeepAlive). Default childproto.DefaultKeepAlive.
	KeepAlive time.Duration
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
		childproto.ActivityFeedPath:     serveActivity(opts.KeepAlive),
		childproto.InventoryFeedPath:    serveInventory(opts.KeepAlive),
		childproto.ConversationFeedPath: serveConversation,
	}
	if opts.Documents != nil {
		routes[childproto.DocumentFeedPath] = opts.Documents.ServeHTTP
	}
	return &handler{routes: routes}
}

// handler routes by exact path.
type handler struct {
	routes map[string]http.HandlerFunc
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f, ok := h.routes[r.URL.Path]; ok && r.Method == http.MethodGet {
		f(w, r)
		return
	}
	childproto.WriteError(w, http.StatusNotFound, "not found")
}
