package docstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
)

// updateWire is one DocumentUpdate, snapshot or patch, as the reducer
// reads it: the fields it interprets decoded (with their JSON kept where
// the state stores them), every other field kept as JSON, verbatim.
// Fields outside the contract's schemas are dropped: the schemas are
// closed, so a new field is added to the contract, and here, first.
type updateWire struct {
	Kind             string               `json:"kind"`
	Epoch            jsonValue[string]    `json:"epoch"`
	Revision         json.RawMessage      `json:"revision"`
	PreviousRevision json.RawMessage      `json:"previousRevision"`
	CompareTarget    jsonValue[string]    `json:"compareTarget"`
	Scope            jsonValue[scopeWire] `json:"scope"`
	Roots            []rootWire           `json:"roots"` // nil when absent (or null)
	Upserts          []*docEntry          `json:"upserts"`
	Removals         []removalWire        `json:"removals"`
	ChangedID        jsonValue[*string]   `json:"changedId"`

	Discovery            json.RawMessage `json:"discovery"`
	RepositoryState      json.RawMessage `json:"repositoryState"`
	LatestChange         json.RawMessage `json:"latestChange"`
	WorkspaceAPIRevision json.RawMessage `json:"workspaceApiRevision"`
	Repositories         json.RawMessage `json:"repositories"`
	InitialFollow        json.RawMessage `json:"initialFollow"`
	DefaultDocumentID    json.RawMessage `json:"defaultDocumentId"` // "null" when null, nil when absent
	GeneratedAt          json.RawMessage `json:"generatedAt"`
	Build                json.RawMessage `json:"build"`
	UnscopedFingerprint  json.RawMessage `json:"unscopedFingerprint"`
	Terminal             json.RawMessage `json:"terminal"`
}

// rootWire is a DocumentRootGroup (in a snapshot) or a DocumentRoot (in a
// patch, without docs).
type rootWire struct {
	ID          jsonValue[string] `json:"id"`
	Label       json.RawMessage   `json:"label"`
	Path        json.RawMessage   `json:"path"`
	HiddenCount json.RawMessage   `json:"hiddenCount"`
	Docs        []*docEntry       `json:"docs"`
}

// removalWire is an item of DocumentPatch.removals.
type removalWire struct {
	RootID string `json:"rootId"`
	ID     string `json:"id"`
}

// scopeWire is DocumentScope.
type scopeWire struct {
	Kind       string `json:"kind"`
	DocumentID string `json:"documentId"`
}

// docContext is what a watch context is made of, compared between an
// update and the state.
type docContext struct {
	compareTarget string
	scope         scopeWire
}

// jsonValue is a JSON value decoded, with its JSON kept verbatim. raw is
// nil when the field is absent and "null" when it is null.
type jsonValue[T any] struct {
	raw json.RawMessage
	v   T
}

func (j *jsonValue[T]) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &j.v); err != nil {
		return err
	}
	j.raw = bytes.Clone(b)
	return nil
}

var errNotObject = errors.New("not a JSON object")

// UnmarshalJSON reads a DocumentMeta, keeping its JSON verbatim. A
// snapshot holds one per file, so it walks the object itself rather than
// running a second reflective decode: the decoder calling it has already
// checked that the whole update is valid JSON.
func (e *docEntry) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return errNotObject
	}
	*e = docEntry{raw: bytes.Clone(b)}
	var err error
	eachMember(b, func(key, value []byte) bool {
		switch string(key) {
		case `"id"`:
			e.id, err = jsonStringOf(value)
		case `"rootId"`:
			e.rootID, err = jsonStringOf(value)
		case `"relativePath"`:
			e.relativePath, err = jsonStringOf(value)
		case `"revision"`:
			e.revision, e.hasRevision = parseRevision(value)
			e.badRevision = !e.hasRevision
		}
		return err == nil
	})
	return err
}

// eachMember calls f with the key (quoted, as written) and the value of
// each member of the valid JSON object b, until f returns false.
func eachMember(b []byte, f func(key, value []byte) bool) {
	i := skipSpace(b, 1)
	for i < len(b) && b[i] == '"' {
		k := skipValue(b, i)
		v := skipSpace(b, skipSpace(b, k)+1) // past the colon
		end := skipValue(b, v)
		if !f(b[i:k], b[v:end]) {
			return
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
}

// skipValue returns the end of the valid JSON value starting at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a number or literal closing its parent
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i // the end of a number or literal
			}
		}
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

var errNotString = errors.New("not a JSON string")

// jsonStringOf decodes a JSON string value; one without escapes needs no
// decoder. null is "" (as the decoder has it for a string field).
func jsonStringOf(value []byte) (string, error) {
	switch {
	case string(value) == "null":
		return "", nil
	case len(value) < 2 || value[0] != '"':
		return "", errNotString
	case bytes.IndexByte(value, '\\') < 0:
		return string(value[1 : len(value)-1]), nil
	}
	var s string
	err := json.Unmarshal(value, &s)
	return s, err
}

// isCompact reports whether the JSON b holds no whitespace outside its
// strings, as the child writes it, so it needs no compacting.
func isCompact(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

// decodeUpdate reads one DocumentUpdate. Its JSON is compacted first
// (unless it is already, the usual case), so the fields the state keeps
// verbatim hold no insignificant whitespace.
// An update that is not a JSON object, or whose fields have the wrong JSON
// types where the reducer reads them, is an error.
func decodeUpdate(update []byte) (*updateWire, error) {
	b := update
	if !isCompact(b) {
		var buf bytes.Buffer
		buf.Grow(len(update))
		if err := json.Compact(&buf, update); err != nil {
			return nil, err
		}
		b = buf.Bytes()
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, errNotObject
	}
	u := new(updateWire)
	if err := json.Unmarshal(b, u); err != nil {
		return nil, err
	}
	return u, nil
}

// context is the update's watch context; ok is false when the scope is
// not an object.
func (u *updateWire) context() (docContext, bool) {
	if len(u.Scope.raw) == 0 || u.Scope.raw[0] != '{' {
		return docContext{}, false
	}
	return docContext{compareTarget: u.CompareTarget.v, scope: u.Scope.v}, true
}

// snapshotComplete reports whether a snapshot has every field a
// DocumentSnapshot requires (kind, epoch and revision are checked before),
// its roots included, so the materialized snapshot has them too.
func (u *updateWire) snapshotComplete() bool {
	if u.Roots == nil || !allPresent(u.Discovery, u.RepositoryState, u.WorkspaceAPIRevision,
		u.Repositories, u.CompareTarget.raw, u.InitialFollow, u.DefaultDocumentID,
		u.ChangedID.raw, u.GeneratedAt, u.Build) {
		return false
	}
	return rootsComplete(u.Roots)
}

// patchComplete reports whether a patch has every field a DocumentPatch
// requires (kind, epoch, revisions and context are checked before), and
// whole roots when it has roots.
func (u *updateWire) patchComplete() bool {
	if u.Upserts == nil || u.Removals == nil ||
		!allPresent(u.GeneratedAt, u.UnscopedFingerprint, u.ChangedID.raw) {
		return false
	}
	return rootsComplete(u.Roots)
}

func rootsComplete(roots []rootWire) bool {
	for _, r := range roots {
		if r.ID.raw == nil || !allPresent(r.Label, r.Path, r.HiddenCount) {
			return false
		}
	}
	return true
}

// present reports a field that is there and not null.
func present(raw json.RawMessage) bool {
	return raw != nil && string(raw) != "null"
}

// allPresent reports whether every field is there (null counts: the
// schemas say which fields are nullable, and the reducer keeps them as they
// are).
func allPresent(fields ...json.RawMessage) bool {
	for _, f := range fields {
		if f == nil {
			return false
		}
	}
	return true
}

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: the browser runs
// the same reducer, so revisions must be exact there too.
const maxSafeInteger = 1<<53 - 1

// parseRevision reads a revision: a JSON number that is a safe integer
// ≥ 0, written as an integer or not (5.0 and 5e0 are 5, as in JavaScript).
func parseRevision(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false // absent, null, or not a number
	}
	s := string(raw)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, n >= 0 && n <= maxSafeInteger
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// appendInt appends n in decimal.
func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }
