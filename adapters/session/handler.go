package session

import (
	"encoding/json"
	"net/http"
	"time"
)

// Revision is the workspace API revision this child speaks. It versions the
// whole internal protocol described in the package comment.
const Revision = 24

// FactsPath is the internal endpoint that answers the session's Facts. It
// lies outside /s/ so the Hub never forwards a client's request to it.
const FactsPath = "/_wharf/facts"

// Facts is the body of GET FactsPath.
type Facts struct {
	WorkspaceAPIRevision int     `json:"workspaceApiRevision"`
	Shells               []Shell `json:"shells"` // never null: [] when there is none
}

// Shell is one terminal of the session, as Facts lists it.
type Shell struct {
	Attached bool   `json:"attached"`
	Label    string `json:"label"`
}

// Info is the body of GET /s/{id}/api/session.
type Info struct {
	WorkspaceID          string `json:"workspaceId"`
	WorkspaceAPIRevision int    `json:"workspaceApiRevision"`
}

// HandlerOptions configure NewHandler. The zero value serves every
// endpoint but the document feed, with the default keepalive.
type HandlerOptions struct {
	// Documents serves DocumentFeedPath: the workspace folder's
	// docfeed.Feed.Handler (Main starts the feed on first use). nil
	// leaves the path unserved (404), as any unknown path.
	Documents http.Handler
	// KeepAlive is the interval of the ": keepalive" comments of the
	// activity and inventory feeds; the document feed has its own
	// (docfeed.Options.KeepAlive). Default DefaultKeepAlive.
	KeepAlive time.Duration
}

// NewHandler returns the child's HTTP handler for the workspace id. Routes
// match the exact, already decoded path and the GET method only; anything
// else is a JSON 404, so the Hub's verbatim forwarding never meets a
// redirect or a plain-text error. Every JSON answer carries Cache-Control:
// no-store; feeds answer text/event-stream (see the package comment).
// Feeds stream until the client goes away or the request's context ends:
// a server that must stop ends them through its BaseContext, since a
// stream never goes idle for Shutdown to close it.
func NewHandler(workspaceID string, opts HandlerOptions) http.Handler {
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	base := "/s/" + workspaceID + "/"
	routes := map[string]http.HandlerFunc{
		FactsPath: func(w http.ResponseWriter, _ *http.Request) {
			// No terminal support exists yet, so the list is honestly empty.
			writeJSON(w, http.StatusOK, Facts{WorkspaceAPIRevision: Revision, Shells: []Shell{}})
		},
		base + "api/session": func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, Info{WorkspaceID: workspaceID, WorkspaceAPIRevision: Revision})
		},
		ActivityFeedPath:     serveActivity(opts.KeepAlive),
		InventoryFeedPath:    serveInventory(opts.KeepAlive),
		ConversationFeedPath: serveConversation,
	}
	if opts.Documents != nil {
		routes[DocumentFeedPath] = opts.Documents.ServeHTTP
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
	writeJSON(w, http.StatusNotFound, errorBody{Error: "not found"})
}

type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// An encoding error means the peer went away; there is no one to tell.
	_ = json.NewEncoder(w).Encode(v)
}
