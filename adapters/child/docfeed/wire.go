package docfeed

import "encoding/json"

// The wire shapes of the document topic, field for field the contract's
// schemas in api/openapi.yaml (all closed objects): a field added here must
// be added there first. Required fields never use omitempty; nullable ones
// are pointers without omitempty, so they encode as null.

// Kind is a document's kind (DocumentMeta.kind).
type Kind string

// The document kinds.
const (
	KindMarkdown Kind = "markdown"
	KindAsciiDoc Kind = "asciidoc"
	KindText     Kind = "text"
	KindBinary   Kind = "binary"
)

// documentMeta is DocumentMeta. Values are immutable once published: a
// change is a new documentMeta, so frames and the model can share them.
type documentMeta struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	RelativePath string `json:"relativePath"`
	MtimeMs      int64  `json:"mtimeMs"`
	RootID       string `json:"rootId"`
	Kind         Kind   `json:"kind"`
	Revision     int64  `json:"revision"`
}

// Discovery statuses (DocumentDiscovery.status).
const (
	discoveryIndexing   = "indexing"
	discoveryReady      = "ready"
	discoveryRecovering = "recovering"
	discoveryError      = "error"
)

// discovery is DocumentDiscovery.
type discovery struct {
	Status     string `json:"status"`
	Discovered int    `json:"discovered"`
	Message    string `json:"message,omitempty"`
}

// Repository freshness statuses (RepositoryState.status).
const (
	repoPending = "pending"
	repoReady   = "ready"
	repoStale   = "stale"
	repoError   = "error"
)

// repositoryState is RepositoryState.
type repositoryState struct {
	Generation int64  `json:"generation"`
	Status     string `json:"status"`
	Message    string `json:"message,omitempty"`
}

// latestChange is DocumentLatestChange.
type latestChange struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
}

// scopeJSON is DocumentScope.
type scopeJSON struct {
	Kind       Scope  `json:"kind"`
	DocumentID string `json:"documentId,omitempty"`
}

// rootGroup is DocumentRootGroup.
type rootGroup struct {
	ID          string          `json:"id"`
	Label       string          `json:"label"`
	Path        string          `json:"path"`
	Docs        []*documentMeta `json:"docs"`
	HiddenCount int             `json:"hiddenCount"`
}

// removal is an item of DocumentPatch.removals.
type removal struct {
	RootID string `json:"rootId"`
	ID     string `json:"id"`
}

// snapshotFrame is DocumentSnapshot. Repositories holds the pre-encoded
// RepositorySnapshot array of the frame's compare target.
type snapshotFrame struct {
	Kind                 string          `json:"kind"`
	Epoch                string          `json:"epoch"`
	Revision             int64           `json:"revision"`
	Discovery            discovery       `json:"discovery"`
	RepositoryState      repositoryState `json:"repositoryState"`
	LatestChange         *latestChange   `json:"latestChange,omitempty"`
	WorkspaceAPIRevision int             `json:"workspaceApiRevision"`
	Roots                []rootGroup     `json:"roots"`
	Repositories         json.RawMessage `json:"repositories"`
	CompareTarget        CompareTarget   `json:"compareTarget"`
	InitialFollow        bool            `json:"initialFollow"`
	DefaultDocumentID    *string         `json:"defaultDocumentId"`
	ChangedID            *string         `json:"changedId"`
	GeneratedAt          int64           `json:"generatedAt"`
	Build                *BuildSummary   `json:"build"`
	Scope                scopeJSON       `json:"scope"`
	UnscopedFingerprint  string          `json:"unscopedFingerprint"`
}

// patchFrame is DocumentPatch. It never carries roots: a feed has one root
// for its whole life (a new root set means a new epoch).
type patchFrame struct {
	Kind                string           `json:"kind"`
	Epoch               string           `json:"epoch"`
	PreviousRevision    int64            `json:"previousRevision"`
	Revision            int64            `json:"revision"`
	GeneratedAt         int64            `json:"generatedAt"`
	Scope               scopeJSON        `json:"scope"`
	CompareTarget       CompareTarget    `json:"compareTarget"`
	UnscopedFingerprint string           `json:"unscopedFingerprint"`
	Upserts             []*documentMeta  `json:"upserts"`
	Removals            []removal        `json:"removals"`
	ChangedID           *string          `json:"changedId"`
	Discovery           *discovery       `json:"discovery,omitempty"`
	Repositories        json.RawMessage  `json:"repositories,omitempty"`
	RepositoryState     *repositoryState `json:"repositoryState,omitempty"`
	DefaultDocumentID   optionalID       `json:"defaultDocumentId,omitzero"`
}

// optionalID is a field that may be absent, null or a string: absent
// while unset, null when set to "".
type optionalID struct {
	set bool
	id  string
}

func setID(id string) optionalID { return optionalID{set: true, id: id} }

// IsZero reports an absent field, for omitzero.
func (o optionalID) IsZero() bool { return !o.set }

// MarshalJSON encodes "" as null.
func (o optionalID) MarshalJSON() ([]byte, error) {
	if o.id == "" {
		return []byte("null"), nil
	}
	return json.Marshal(o.id)
}

// Repository statuses (RepositorySnapshot.status).
const (
	repositoryAvailable   = "available"
	repositoryNonGit      = "non-git"
	repositoryUnavailable = "unavailable"
)

// repositorySnapshot is RepositorySnapshot, for one compare target.
type repositorySnapshot struct {
	ID              string           `json:"id"`
	RootPath        string           `json:"rootPath"`
	Label           string           `json:"label"`
	WatchedRootIDs  []string         `json:"watchedRootIds"`
	Metadata        *repoMetadata    `json:"metadata"`
	Status          string           `json:"status"`
	Base            *compareBase     `json:"base"`
	ChangedFiles    []changedFile    `json:"changedFiles"`
	GitIgnoredFiles []string         `json:"gitIgnoredFiles"`
	ConfigWarnings  []any            `json:"configWarnings"`
	Message         *string          `json:"message"`
	CommitLog       []commitLogEntry `json:"commitLog"`
}

// repoMetadata is RepositorySnapshot.metadata, an open object in the
// contract; Wharf fills it from `git status --porcelain=v2 --branch`.
type repoMetadata struct {
	// Branch is the checked-out branch, null when HEAD is detached.
	Branch *string `json:"branch"`
	// Detached reports a detached HEAD.
	Detached bool `json:"detached"`
	// HeadSha and HeadShort name HEAD's commit; null before the first one.
	HeadSha   *string `json:"headSha"`
	HeadShort *string `json:"headShort"`
	// Upstream is the branch's upstream, Ahead and Behind its distance
	// from it; all null without an upstream.
	Upstream *string `json:"upstream"`
	Ahead    *int    `json:"ahead"`
	Behind   *int    `json:"behind"`
}

// compareBase is RepositorySnapshot.base, an open object in the contract.
type compareBase struct {
	// Mode is "merge-base" when changes are compared against the merge
	// base with the default branch, "head" when against HEAD.
	Mode string `json:"mode"`
	// Ref is the default branch the base was taken from (e.g.
	// "origin/main"); null for last-commit or when none exists.
	Ref *string `json:"ref"`
	// MergeBase is the merge base's full id, null in "head" mode.
	MergeBase *string `json:"mergeBase"`
	// CompareTarget is the target this record answers.
	CompareTarget CompareTarget `json:"compareTarget"`
	// ComparedAgainstRef is what changedFiles were actually compared
	// against: "HEAD" or the merge base id; null before the first commit.
	ComparedAgainstRef *string `json:"comparedAgainstRef"`
	// TargetsCollapsed reports that base and last-commit compare against
	// the same commit (on the default branch itself, or without one), so
	// their changed files are the same.
	TargetsCollapsed bool `json:"targetsCollapsed"`
}

// changedFile is RepositoryChangedFile. Hunks are not computed (always
// empty); Additions and Deletions are null for binary and untracked files.
type changedFile struct {
	Path      string  `json:"path"`
	OldPath   *string `json:"oldPath"`
	Status    string  `json:"status"`
	Additions *int    `json:"additions"`
	Deletions *int    `json:"deletions"`
	Hunks     []any   `json:"hunks"`
}

// commitLogEntry is CommitLogEntry.
type commitLogEntry struct {
	Sha           string  `json:"sha"`
	Subject       string  `json:"subject"`
	Message       string  `json:"message"`
	Author        *string `json:"author"`
	RelativeTime  *string `json:"relativeTime"`
	CommittedAtMs int64   `json:"committedAtMs"`
	// Signature is set for a signed commit among the newest checked
	// (signature.go).
	Signature *commitSignature `json:"signature,omitempty"`
}

// ptr returns a pointer to a copy of v, for nullable fields.
func ptr[T any](v T) *T { return &v }
