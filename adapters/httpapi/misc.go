package httpapi

import (
	"net/http"

	apidoc "github.com/wharfhub/wharf/api"
)

// retiredBody is the answer of the workspace child's former stream routes.
type retiredBody struct {
	Error       string `json:"error"`
	Replacement string `json:"replacement"`
}

// handleRetired answers the four internal stream routes that the live
// stream replaced (spec, Errors 7).
func handleRetired(w http.ResponseWriter, _ *http.Request, _ caller) error {
	writeJSON(w, http.StatusGone, retiredBody{
		Error:       "this stream is no longer served; use the live stream",
		Replacement: "/api/hub/live",
	})
	return nil
}

// handleOpenAPI serves the contract document.
func (a *api) handleOpenAPI(w http.ResponseWriter, _ *http.Request, _ caller) error {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(apidoc.OpenAPI)
	return nil
}
