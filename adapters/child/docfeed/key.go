package docfeed

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// CompareTarget is what a subscriber's repository view compares the working
// tree against (the contract's DocumentCompareTarget).
type CompareTarget string

const (
	// CompareBase compares against the merge base with the repository's
	// default branch (origin/HEAD, else main or master).
	CompareBase CompareTarget = "base"
	// CompareLastCommit compares against HEAD.
	CompareLastCommit CompareTarget = "last-commit"
)

// Scope is the kind of a subscriber's document scope (the contract's
// DocumentScope.kind).
type Scope string

const (
	// ScopeFolder receives every document of the workspace.
	ScopeFolder Scope = "folder"
	// ScopeFile receives one pinned document only (Key.DocumentID), but
	// every revision advance.
	ScopeFile Scope = "file"
)

// MaxKeyBytes bounds a LiveDocumentKey, as the contract does.
const MaxKeyBytes = hub.MaxLiveKeyBytes

// ErrInvalidKey is wrapped by every error of ParseKey and Subscribe about
// the key itself; the Hub and Handler answer it with 400.
var ErrInvalidKey = errors.New("invalid document key")

// Key is a parsed LiveDocumentKey: one watch context. Keys are comparable
// values, so equal contexts are equal keys however the client spelled
// them; use Key as a map key, never the raw string.
//
// The zero Key is not valid; ParseKey("") returns the default context
// (CompareBase, ScopeFolder).
type Key struct {
	CompareTarget CompareTarget
	Scope         Scope
	// DocumentID is the absolute, clean path of the pinned document; set
	// exactly when Scope is ScopeFile.
	DocumentID string
}

// defaultKey is the context of an empty key.
var defaultKey = Key{CompareTarget: CompareBase, Scope: ScopeFolder}

// ParseKey validates a LiveDocumentKey with the Hub's own rule
// (hub.ParseDocumentKey), so the Hub and the child agree on every context.
// Any error wraps ErrInvalidKey and its text is safe to show to the client
// (it quotes at most a short prefix of what was sent).
func ParseKey(s string) (Key, error) {
	c, err := hub.ParseDocumentKey(s)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %s", ErrInvalidKey, strings.TrimPrefix(hub.MessageOf(err), ErrInvalidKey.Error()+": "))
	}
	k := Key{CompareTarget: CompareTarget(c.CompareTarget), Scope: ScopeFolder}
	if c.DocumentID != "" {
		k.Scope, k.DocumentID = ScopeFile, c.DocumentID
	}
	return k, nil
}

// String is the key's canonical spelling (hub.DocumentContext.String):
// compareTarget, then scope, then documentId for file scope, always
// explicit ("compareTarget=base&scope=folder"). ParseKey(k.String()) == k.
func (k Key) String() string {
	return hub.DocumentContext{CompareTarget: string(k.CompareTarget), DocumentID: k.DocumentID}.String()
}
