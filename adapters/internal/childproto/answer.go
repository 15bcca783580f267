package childproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// ErrorBody is the body of every error answer of the child: 404 for an
// unknown path, method or conversation, 400 for a refused query, 503 for
// a feed that cannot run. The Hub decides by status alone; Error is for
// people reading logs, and the Hub never quotes it to a client.
type ErrorBody struct {
	Error string `json:"error"`
}

// WriteJSON answers status with v as JSON, never to be cached.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// An encoding error means the peer went away; there is no one to tell.
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError answers status with ErrorBody{msg}.
func WriteError(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, ErrorBody{Error: msg})
}

// DecodeError decodes an error answer's body: one JSON object with a
// non-empty string "error".
func DecodeError(data []byte) (ErrorBody, error) {
	var e struct {
		Error *string `json:"error"`
	}
	if err := decodeObject(data, &e); err != nil {
		return ErrorBody{}, fmt.Errorf("error answer: %w", err)
	}
	if e.Error == nil || *e.Error == "" {
		return ErrorBody{}, errors.New("error answer without a message")
	}
	return ErrorBody{Error: *e.Error}, nil
}
