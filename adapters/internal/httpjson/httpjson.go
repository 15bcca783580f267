// Package httpjson is what the Hub's HTTP adapter and the workspace
// child's chat API share of answering JSON: the one table from the core's
// error kinds to HTTP statuses, and the strict decoder of request bodies,
// so both sides refuse the same input with the same status and words.
package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/adapters/internal/jsonkeys"
	"github.com/wharfhub/wharf/hub"
)

// statusOf is the one mapping from the core's error kinds to HTTP statuses.
var statusOf = map[hub.Kind]int{
	hub.Internal:        http.StatusInternalServerError,
	hub.Invalid:         http.StatusBadRequest,
	hub.Unauthenticated: http.StatusUnauthorized,
	hub.Forbidden:       http.StatusForbidden,
	hub.NotFound:        http.StatusNotFound,
	hub.Conflict:        http.StatusConflict,
	hub.TooLarge:        http.StatusRequestEntityTooLarge,
	hub.RateLimited:     http.StatusTooManyRequests,
	hub.Unavailable:     http.StatusServiceUnavailable,
}

// StatusOf reports the HTTP status for err's kind: 500 for an error that
// is not the core's.
func StatusOf(err error) int { return statusOf[hub.KindOf(err)] }

// Decode reads a JSON object from r's body into v, strictly: at most
// limit bytes, Content-Type application/json, valid UTF-8, one object, no
// unknown fields, field names matched exactly, no key twice in an object,
// no trailing data. Oversize bodies are Invalid unless the
// operation documents 413 (tooLarge true).
func Decode(r *http.Request, limit int64, tooLarge bool, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return hub.Errorf(hub.Invalid, "Content-Type must be application/json")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		if tooLarge {
			return hub.Errorf(hub.TooLarge, "request body is larger than %d bytes", limit)
		}
		return hub.Errorf(hub.Invalid, "request body is larger than %d bytes", limit)
	}
	if err != nil {
		return hub.Errorf(hub.Invalid, "request body could not be read")
	}
	if !utf8.Valid(body) {
		return hub.Errorf(hub.Invalid, "request body is not valid UTF-8")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return hub.Errorf(hub.Invalid, "request body is required")
	}
	if trimmed[0] != '{' {
		if json.Valid(trimmed) {
			return hub.Errorf(hub.Invalid, "request must be a JSON object")
		}
		return hub.Errorf(hub.Invalid, "invalid JSON body")
	}
	if err := jsonkeys.Check(trimmed, reflect.TypeOf(v), "request"); err != nil {
		return hub.Errorf(hub.Invalid, "%s", err)
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return hub.Errorf(hub.Invalid, "invalid JSON body: unexpected data after the object")
	}
	return nil
}

func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return hub.Errorf(hub.Invalid, "%s must be %s", te.Field, jsonKind(te.Type.Kind().String()))
	case errors.As(err, &te):
		return hub.Errorf(hub.Invalid, "request must be a JSON object")
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		return hub.Errorf(hub.Invalid, "invalid JSON body")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return hub.Errorf(hub.Invalid, "request contains an unknown field: %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return hub.Errorf(hub.Invalid, "invalid JSON body")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "int32", "uint", "uint64", "uint32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return fmt.Sprintf("of type %s", goKind)
}
