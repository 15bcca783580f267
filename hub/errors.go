package hub

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an Error. The set is closed: adapters map each Kind to
// exactly one transport status, and a Kind added here must be added to that
// mapping (a test in adapters/httpapi fails otherwise). New kinds are only
// ever appended.
type Kind int

// The kinds, with the HTTP status the spec uses for each.
const (
	Internal        Kind = iota // 500: persistence, initialization or recovery failure
	Invalid                     // 400: malformed or invalid input
	Unauthenticated             // 401: missing or invalid session
	Forbidden                   // 403: not allowed, including a failed same-origin check
	NotFound                    // 404: unknown or non-owned resource
	Conflict                    // 409: the current state refuses the operation
	TooLarge                    // 413: request body too large
	RateLimited                 // 429: too many attempts
	Unavailable                 // 503: temporarily unavailable
)

var kindNames = [...]string{
	Internal:        "internal",
	Invalid:         "invalid",
	Unauthenticated: "unauthenticated",
	Forbidden:       "forbidden",
	NotFound:        "not found",
	Conflict:        "conflict",
	TooLarge:        "too large",
	RateLimited:     "rate limited",
	Unavailable:     "unavailable",
}

// Kinds lists every Kind, for exhaustive tests of kind mappings.
func Kinds() []Kind {
	ks := make([]Kind, len(kindNames))
	for i := range kindNames {
		ks[i] = Kind(i)
	}
	return ks
}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Error is the one error type of the core. Message is safe to show to the
// caller; Err is the cause, for logs only, and never reaches a response.
// Details carries the extra fields that a few of the spec's error bodies have.
type Error struct {
	Kind    Kind
	Message string
	Details *Details
	Err     error
}

// Details holds the extra, public fields of the spec's special error bodies.
// A zero field is absent from the body.
type Details struct {
	// StopConflict marks a FolderStopConflict: the body gains needsStop: true
	// and the sorted WorkspaceIDs of the sessions that must be stopped.
	StopConflict bool
	WorkspaceIDs []string
	// RetainedPath is an initialized repository kept after a failed onboarding.
	RetainedPath string
	// NeedsInit marks a WorkspaceConflict: the folder is not a Git
	// repository and the request did not confirm initializing it.
	NeedsInit bool
	// Field names the input an AgentAccountError concerns.
	Field string
	// RetryAfter is how long a client refused as RateLimited should wait
	// before trying again, when the limit knows; a transport says it
	// beside the body (HTTP's Retry-After), not in it.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Kind.String()
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind k whose public message is formatted from
// format and args. Never put a secret or a host path a caller should not see
// into the message.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error of kind k with a public message and a private cause.
func Wrap(k Kind, cause error, message string) *Error {
	return &Error{Kind: k, Message: message, Err: cause}
}

// KindOf reports the Kind of err: that of the first *Error in its chain, or
// Internal for any other non-nil error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// MessageOf reports the public message of err, or "" when err carries none
// (a cause the caller must not see).
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}

// ErrNotEmpty is returned by FS.RemoveEmpty for a directory that still has
// entries.
var ErrNotEmpty = errors.New("directory not empty")

// ErrNotDir is returned by FS.RemoveEmpty for a path that is not a
// directory (a file or a symbolic link).
var ErrNotDir = errors.New("not a directory")
