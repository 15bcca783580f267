package childproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// InternalPrefix starts every path of the internal protocol. The Hub never
// forwards a client's request under it, so only the Hub reaches these
// endpoints; client requests are forwarded under /s/{ID}/ only.
const InternalPrefix = "/_wharf/"

// FactsPath is the endpoint that answers the session's Facts. The Hub asks
// it once to confirm readiness, then whenever it needs the facts.
const FactsPath = InternalPrefix + "facts"

// Facts is the body of GET FactsPath: what a running session reports
// about itself.
type Facts struct {
	// WorkspaceAPIRevision is the workspace API revision the child speaks,
	// which versions this protocol too; always positive.
	WorkspaceAPIRevision int `json:"workspaceApiRevision"`
	// Shells lists the session's terminals; the child sends [] when there
	// is none, never null.
	Shells []Shell `json:"shells"`
}

// Shell is one terminal of the session, as Facts lists it.
type Shell struct {
	Attached bool   `json:"attached"`
	Label    string `json:"label"`
}

// MaxFactsBytes bounds a facts answer; real ones are a few hundred bytes.
const MaxFactsBytes = 1 << 20

// ReadFacts reads a facts answer's body, at most MaxFactsBytes of it, and
// decodes it with DecodeFacts.
func ReadFacts(body io.Reader) (Facts, error) {
	b, err := io.ReadAll(io.LimitReader(body, MaxFactsBytes+1))
	if err != nil {
		return Facts{}, fmt.Errorf("facts: %w", err)
	}
	if len(b) > MaxFactsBytes {
		return Facts{}, fmt.Errorf("facts: answer over %d bytes", MaxFactsBytes)
	}
	return DecodeFacts(b)
}

// DecodeFacts decodes one Facts JSON object. It refuses anything else
// (another JSON value, trailing data, a field of the wrong type) and a
// missing or non-positive workspaceApiRevision. Unknown fields are
// ignored, and absent or null shells decode as none.
func DecodeFacts(data []byte) (Facts, error) {
	var f struct {
		Revision *int    `json:"workspaceApiRevision"`
		Shells   []Shell `json:"shells"`
	}
	if err := decodeObject(data, &f); err != nil {
		return Facts{}, fmt.Errorf("facts: %w", err)
	}
	if f.Revision == nil || *f.Revision <= 0 {
		return Facts{}, errors.New("facts: no workspaceApiRevision")
	}
	if f.Shells == nil {
		f.Shells = []Shell{}
	}
	return Facts{WorkspaceAPIRevision: *f.Revision, Shells: f.Shells}, nil
}

// decodeObject decodes data, which must hold exactly one JSON object, into
// v.
func decodeObject(data []byte, v any) error {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(data, v)
}
