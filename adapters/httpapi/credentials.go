package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/httpjson"
	"github.com/wharfhub/wharf/hub"
)

// CredentialService is the credentials family: keys and tokens, their
// assignments to workspaces, and the tools they rely on (credentials.go,
// credentialtools.go).
type CredentialService interface {
	Credentials(ctx context.Context) (*hub.CredentialList, error)
	CredentialPublicKey(ctx context.Context, id string) (hub.Credential, error)
	GenerateSSHKey(ctx context.Context, who hub.Requester, req hub.NewSSHKey) (hub.CredentialView, error)
	ImportSSHKey(ctx context.Context, who hub.Requester, req hub.NewSSHKey) (hub.CredentialView, error)
	GenerateOpenPGPKey(ctx context.Context, who hub.Requester, req hub.NewOpenPGPKey) (hub.CredentialView, error)
	ImportOpenPGPKey(ctx context.Context, who hub.Requester, req hub.NewOpenPGPKey) (hub.CredentialView, error)
	CreateToken(ctx context.Context, req hub.NewToken) (hub.CredentialView, error)
	UnlockCredential(ctx context.Context, who hub.Requester, id, passphrase string) (hub.CredentialView, error)
	LockCredential(ctx context.Context, id string) (hub.CredentialView, error)
	EnableCredential(ctx context.Context, id string) (hub.CredentialView, error)
	DisableCredential(ctx context.Context, id string) (hub.CredentialView, error)
	TestCredential(ctx context.Context, who hub.Requester, id string) ([]hub.ReadinessResult, error)
	DeleteCredential(ctx context.Context, id string, confirm, unassign bool) error
	AssignCredential(ctx context.Context, id string, req hub.AssignCredentialRequest) (hub.CredentialAssignment, error)
	UnassignCredential(ctx context.Context, id string, req hub.UnassignCredentialRequest) (bool, error)
	AssignWorkspaceCredentials(ctx context.Context, ws string, req hub.WorkspaceCredentialsRequest) ([]hub.CredentialAssignment, error)
	CredentialUses(ctx context.Context, id string) ([]hub.CredentialUseRecord, error)
	CredentialApprovals(ctx context.Context) []hub.CredentialApproval
	DecideCredentialApproval(ctx context.Context, caller hub.DeviceSession, id string, allow bool) error
	CredentialTools(ctx context.Context) []hub.CredentialTool
	SetCredentialTool(ctx context.Context, tool string, path *string) (hub.CredentialTool, error)
	TestCredentialTool(ctx context.Context, tool string) (hub.CredentialTool, error)
}

// keyBodyLimit bounds the bodies that carry a private key or a token (a
// key of at most 1 MiB, JSON-escaped); an oversized body is a 400, as
// these operations list no 413.
const keyBodyLimit = 1_100_000

// The wire shapes (api/openapi.yaml, "Credentials").

type credentialRecord struct {
	ID           string             `json:"id"`
	Name         string             `json:"name"`
	Type         hub.CredentialType `json:"type"`
	Capabilities []hub.Capability   `json:"capabilities"`
	Enabled      bool               `json:"enabled"`
	CreatedAt    string             `json:"createdAt"`
	Metadata     credentialMetadata `json:"metadata"`
	Assignments  []assignmentRecord `json:"assignments"`
	Readiness    []readinessRecord  `json:"readiness"`
}

// credentialMetadata is one of the three metadata shapes: a key's public
// key and fingerprint, or a token's host and user name.
type credentialMetadata struct {
	PublicKey   string `json:"publicKey,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Host        string `json:"host,omitempty"`
	Username    string `json:"username,omitempty"`
}

type assignmentRecord struct {
	WorkspaceID  string             `json:"workspaceId"`
	CredentialID string             `json:"credentialId"`
	Role         hub.CredentialRole `json:"role"`
	Host         string             `json:"host,omitempty"`
	UsePolicy    hub.UsePolicy      `json:"usePolicy"`
}

type toolRecord struct {
	Tool     hub.CredentialToolName `json:"tool"`
	Path     *string                `json:"path"`
	Version  *string                `json:"version"`
	Results  []readinessRecord      `json:"results"`
	Guidance *string                `json:"guidance"`
}

func toCredentialRecord(v hub.CredentialView) credentialRecord {
	out := credentialRecord{ID: v.ID, Name: v.Name, Type: v.Type, Capabilities: v.Capabilities, Enabled: v.Enabled,
		CreatedAt: v.CreatedAt.UTC().Format(time.RFC3339Nano), Assignments: toAssignments(v.Assignments), Readiness: toReadiness(v.Readiness)}
	if v.Type == hub.CredentialToken {
		out.Metadata = credentialMetadata{Host: v.Host, Username: v.Username}
	} else {
		out.Metadata = credentialMetadata{PublicKey: v.PublicKey, Fingerprint: v.Fingerprint}
	}
	return out
}

func toAssignments(as []hub.CredentialAssignment) []assignmentRecord {
	out := make([]assignmentRecord, len(as))
	for i, a := range as {
		out[i] = assignmentRecord{WorkspaceID: a.WorkspaceID, CredentialID: a.CredentialID, Role: a.Role, Host: a.Host, UsePolicy: a.Policy}
	}
	return out
}

func toToolRecord(t hub.CredentialTool) toolRecord {
	out := toolRecord{Tool: t.Tool, Results: toReadiness(t.Results)}
	if t.Path != "" {
		out.Path = &t.Path
	}
	if t.Version != "" {
		out.Version = &t.Version
	}
	if t.Guidance != "" {
		out.Guidance = &t.Guidance
	}
	return out
}

type credentialAnswer struct {
	Credential credentialRecord `json:"credential"`
}

type toolAnswer struct {
	Tool toolRecord `json:"tool"`
}

// requester is who asks, for the rate limits: the Hub user and the
// client address the login limits count.
func (a *api) requester(r *http.Request, c caller) hub.Requester {
	return hub.Requester{User: c.User, Client: a.clientAddr(r)}
}

// writeCredential answers one credential, or err (with Retry-After on a
// rate-limited refusal).
func writeCredential(w http.ResponseWriter, v hub.CredentialView, err error) error {
	if err != nil {
		setRetryAfter(w, err)
		return err
	}
	writeJSON(w, http.StatusOK, credentialAnswer{Credential: toCredentialRecord(v)})
	return nil
}

// emptyBody reads the empty object the bodiless operations require.
func emptyBody(r *http.Request) error {
	var none struct{}
	return httpjson.Decode(r, defaultBodyLimit, false, &none)
}

func (a *api) handleListCredentials(w http.ResponseWriter, r *http.Request, _ caller) error {
	list, err := a.credentials.Credentials(r.Context())
	if err != nil {
		return err
	}
	writeRawJSON(w, http.StatusOK, list.Encoded(encodeCredentialList))
	return nil
}

// encodeCredentialList is the CredentialList answer of l. The core keeps
// it with the snapshot, so it is encoded once per change, not per request.
func encodeCredentialList(l *hub.CredentialList) []byte {
	out := struct {
		Credentials []credentialRecord `json:"credentials"`
	}{Credentials: make([]credentialRecord, len(l.Credentials))}
	for i, v := range l.Credentials {
		out.Credentials[i] = toCredentialRecord(v)
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // strings, bools and their slices only
	}
	return append(b, '\n')
}

func (a *api) handleCredentialPublicKey(w http.ResponseWriter, r *http.Request, _ caller) error {
	c, err := a.credentials.CredentialPublicKey(r.Context(), r.PathValue("credentialId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		ID          string             `json:"id"`
		Type        hub.CredentialType `json:"type"`
		PublicKey   string             `json:"publicKey"`
		Fingerprint string             `json:"fingerprint"`
	}{c.ID, c.Type, c.PublicKey, c.Fingerprint})
	return nil
}

type newSSHKeyRequest struct {
	Name         string           `json:"name"`
	Capabilities []hub.Capability `json:"capabilities"`
	Passphrase   string           `json:"passphrase"`
	PrivateKey   string           `json:"privateKey"`
}

func (a *api) handleGenerateSSH(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Name         string           `json:"name"`
		Capabilities []hub.Capability `json:"capabilities"`
		Passphrase   string           `json:"passphrase"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	v, err := a.credentials.GenerateSSHKey(r.Context(), a.requester(r, c), hub.NewSSHKey{Name: req.Name, Capabilities: req.Capabilities, Passphrase: req.Passphrase})
	return writeCredential(w, v, err)
}

func (a *api) handleImportSSH(w http.ResponseWriter, r *http.Request, c caller) error {
	var req newSSHKeyRequest
	if err := httpjson.Decode(r, keyBodyLimit, false, &req); err != nil {
		return err
	}
	v, err := a.credentials.ImportSSHKey(r.Context(), a.requester(r, c), hub.NewSSHKey{Name: req.Name, Capabilities: req.Capabilities,
		PrivateKey: req.PrivateKey, Passphrase: req.Passphrase})
	return writeCredential(w, v, err)
}

func (a *api) handleGenerateOpenPGP(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Name       string `json:"name"`
		UserID     string `json:"userId"`
		Passphrase string `json:"passphrase"`
	}
	if err := httpjson.Decode(r, defaultBodyLimit, false, &req); err != nil {
		return err
	}
	v, err := a.credentials.GenerateOpenPGPKey(r.Context(), a.requester(r, c), hub.NewOpenPGPKey{Name: req.Name, UserID: req.UserID, Passphrase: req.Passphrase})
	return writeCredential(w, v, err)
}

func (a *api) handleImportOpenPGP(w http.ResponseWriter, r *http.Request, c caller) error {
	var req struct {
		Name       string `json:"name"`
		PrivateKey string `json:"privateKey"`
	}
	if err := httpjson.Decode(r, keyBodyLimit, false, &req); err != nil {
		return err
	}
	v, err := a.credentials.ImportOpenPGPKey(r.Context(), a.requester(r, c), hub.NewOpenPGPKey{Name: req.Name, PrivateKey: req.PrivateKey})
	return writeCredential(w, v, err)
}

func (a *api) handleCreateToken(w http.ResponseWriter, r *http.Request, _ caller) error {
	var req struct {
		Name         string           `json:"name"`
		Host         string           `json:"host"`
		Username     *string          `json:"username"`
		Token        string           `json:"token"`
		Capabilities []hub.Capability `json:"capabilities"`
	}
	if err := httpjson.Decode(r, keyBodyLimit, false, &req); err != nil {
		return err
	}
	if req.Username != nil && *req.Username == "" {
		return hub.Errorf(hub.Invalid, "username must be a non-empty string when it is given")
	}
	v, err := a.credentials.CreateToken(r.Context(), hub.NewToken{Name: req.Name, Host: req.Host, Username: deref(req.Username),
		Token: req.Token, Capabilities: req.Capabilities})
	return writeCredential(w, v, err)
}

type readinessRecord struct {
	Layer   string `json:"layer"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func toReadiness(rs []hub.ReadinessResult) []readinessRecord {
	out := make([]readinessRecord, len(rs))
	for i, r := range rs {
		out[i] = readinessRecord{Layer: r.Layer, Status: r.Status, Message: r.Message}
	}
	return out
}
