package session

import (
	"encoding/json"
	"net/http"
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

// NewHandler returns the child's HTTP handler for the workspace id. Routes
// match the exact, already decoded path and the GET method only; anything
// else is a JSON 404, so the Hub's verbatim forwarding never meets a
// redirect or a plain-text error. Every answer carries Cache-Control:
// no-store.
func NewHandler(workspaceID string) http.Handler {
	base := "/s/" + workspaceID + "/"
	return &handler{routes: map[string]http.HandlerFunc{
		FactsPath: func(w http.ResponseWriter, _ *http.Request) {
			// No terminal support exists yet, so the list is honestly empty.
			writeJSON(w, http.StatusOK, Facts{WorkspaceAPIRevision: Revision, Shells: []Shell{}})
		},
		base + "api/session": func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, Info{WorkspaceID: workspaceID, WorkspaceAPIRevision: Revision})
		},
	}}
}

// handler routes by exact path. The live-stream work adds its feeds here.
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
