package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// errorBody is the spec's error shape, with the optional fields of its
// special variants.
type errorBody struct {
	Error        string   `json:"error"`
	NeedsStop    bool     `json:"needsStop,omitempty"`
	WorkspaceIDs []string `json:"workspaceIds,omitempty"`
	RetainedPath string   `json:"retainedPath,omitempty"`
	NeedsInit    bool     `json:"needsInit,omitempty"`
	Field        string   `json:"field,omitempty"`
}

// writeError answers err as {error} with its kind's status. An error
// without a public message (an unexpected failure) is logged with its
// cause and answered with a generic message, never the cause.
func (a *api) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := httpjson.StatusOf(err)
	body := errorBody{Error: hub.MessageOf(err)}
	if body.Error == "" || status == http.StatusInternalServerError {
		a.logFailure(r, "request failed", err)
	}
	if body.Error == "" {
		body.Error = http.StatusText(status)
		if status == http.StatusInternalServerError {
			body.Error = "internal error"
		}
	}
	var e *hub.Error
	if errors.As(err, &e) && e.Details != nil {
		body.NeedsStop = e.Details.StopConflict
		body.WorkspaceIDs = e.Details.WorkspaceIDs
		body.RetainedPath = e.Details.RetainedPath
		body.NeedsInit = e.Details.NeedsInit
		body.Field = e.Details.Field
	}
	writeJSON(w, status, body)
}

// logFailure logs err, the cause of a failed request, at ERROR under the
// request's operation and route pattern (never its URL, whose query may
// hold what a client should not see logged). A failure the client caused
// by leaving (its request's context ended, or the core saw the
// cancellation and wrapped it) is no fault of the Hub's: it is logged at
// DEBUG, so an operator's ERROR lines stay the ones to act on.
func (a *api) logFailure(r *http.Request, msg string, err error) {
	level := slog.LevelError
	if clientGone(r, err) {
		level = slog.LevelDebug
	}
	a.log.LogAttrs(r.Context(), level, msg, slog.String("op", a.opOf(r)), slog.String("method", r.Method),
		slog.String("route", r.Pattern), slog.String("error", err.Error()))
}

// clientGone reports whether err is, or came of, r's client leaving: a
// cancellation, or any failure once the request's context has ended. (A
// request's context ends when its client disconnects or the server shuts
// down; a deadline of the Hub's own is not a cancellation.)
func clientGone(r *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) || r.Context().Err() != nil
}

// writeJSON answers v as JSON. Every JSON answer of the API is no-store:
// they carry session-bound state.
func writeJSON(w http.ResponseWriter, status int, v any) {
	jsonHeaders(w)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeRawJSON answers body, already encoded JSON. Its length is known, so
// it is sent with a Content-Length rather than chunked.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	jsonHeaders(w)
	w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	w.Write(body)
}

// The JSON answers' header values, shared by every answer: assigned under
// canonical keys, they skip Header.Set's canonicalization, which the
// busiest answers would pay per request. A value slice is never appended
// to in place (its capacity is its length), so sharing it is safe.
var (
	headerJSON    = []string{"application/json"}
	headerNoStore = []string{"no-store"}
	headerNosniff = []string{"nosniff"}
	// HSTS under TLS: a year, this host only (other services may share
	// the domain).
	headerHSTS = []string{"max-age=31536000"}
)

// jsonHeaders sets the headers of a JSON answer; nosniff (and HSTS under
// TLS) are set on every response by ServeHTTP.
func jsonHeaders(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = headerJSON
	h["Cache-Control"] = headerNoStore
}

// writeStatus answers a transport-level error that has no core kind.
func writeStatus(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}
