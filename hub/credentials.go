package hub

import (
	"sync"
	"time"
)

// The credentials family's records: keys and tokens the Hub holds, lent
// to the workspaces they are assigned to. The rules on them (kinds and
// their capabilities, hosts, assignments, readiness) are package
// hub/credential's; the secrets themselves never appear in these records.

// CredentialType is what a credential holds.
type CredentialType string

// The credential types.
const (
	CredentialSSH     CredentialType = "ssh"     // an SSH key
	CredentialOpenPGP CredentialType = "openpgp" // an OpenPGP key
	CredentialToken   CredentialType = "token"   // a token for HTTPS Git or a provider's CLI
)

// CredentialTypes lists every credential type once, in the order above.
func CredentialTypes() []CredentialType {
	return []CredentialType{CredentialSSH, CredentialOpenPGP, CredentialToken}
}

// Capability is a use a credential is held for.
type Capability string

// The capabilities, by type (hub/credential says which type allows which).
const (
	CapSSHAuthentication Capability = "ssh-authentication" // ssh: log in to a Git host
	CapSSHSigning        Capability = "ssh-signing"        // ssh: sign commits (gpg.format=ssh)
	CapOpenPGPSigning    Capability = "openpgp-signing"    // openpgp: sign commits
	CapHTTPSGit          Capability = "https-git"          // token: Git over HTTPS
	CapGitHubCLI         Capability = "github-cli"         // token: the GitHub CLI (gh)
	CapGitLabCLI         Capability = "gitlab-cli"         // token: the GitLab CLI (glab)
)

// Capabilities lists every capability once, in the order above.
func Capabilities() []Capability {
	return []Capability{CapSSHAuthentication, CapSSHSigning, CapOpenPGPSigning, CapHTTPSGit, CapGitHubCLI, CapGitLabCLI}
}

// Credential is the record of one credential: what the Hub keeps of it
// besides its sealed secret (CredentialStore).
type Credential struct {
	// ID is a UUID the Hub mints.
	ID string
	// Name is a label for people: not unique.
	Name         string
	Type         CredentialType
	Capabilities []Capability
	Enabled      bool
	CreatedAt    time.Time
	// PublicKey is, for a key, its public half: an authorized_keys line
	// (ssh) or an ASCII-armored public key block (openpgp).
	PublicKey string
	// Fingerprint identifies a key: "SHA256:…" (ssh) or the primary key's
	// upper-case hex fingerprint (openpgp). Two keys never share one.
	Fingerprint string
	// Host is a token's Git host, normalized; Username the user name sent
	// with it ("" means oauth2).
	Host, Username string
	// Protected says a key's secret is sealed with a passphrase of its
	// owner's, so it stays locked until unlocked with it; an unprotected
	// key is sealed by the Hub alone and loads when the Hub starts.
	Protected bool
}

// CredentialRole is what an assignment makes a credential in a workspace.
type CredentialRole string

// The roles.
const (
	// RoleAuthentication: the workspace's default credential for one Git
	// host (at most one per workspace and host).
	RoleAuthentication CredentialRole = "authentication"
	// RoleSigning: the workspace's signing key (at most one per workspace).
	RoleSigning CredentialRole = "signing"
)

// CredentialRoles lists both roles, in the order above.
func CredentialRoles() []CredentialRole {
	return []CredentialRole{RoleAuthentication, RoleSigning}
}

// CredentialAssignment lends a credential to a workspace in one role.
type CredentialAssignment struct {
	WorkspaceID  string
	CredentialID string
	Role         CredentialRole
	Host         string // authentication only: the normalized host
	// Policy says when a use needs its owner's approval; a stored
	// assignment always has one.
	Policy UsePolicy
}

// UsePolicy says when a use of an assigned credential by a workspace
// session needs its owner's approval. Every use is logged whatever the
// policy.
type UsePolicy string

// The use policies.
const (
	// PolicyAlways allows every use.
	PolicyAlways UsePolicy = "always"
	// PolicyAskOnce holds the first use of each purpose (a login to a
	// host, a signature, a token for a host) in a session until the owner
	// allows or denies it; an allowed purpose is not asked again in that
	// session.
	PolicyAskOnce UsePolicy = "ask-once"
	// PolicyAskEveryTime holds every use until the owner answers.
	PolicyAskEveryTime UsePolicy = "ask-every-time"
)

// UsePolicies lists every use policy once, in the order above.
func UsePolicies() []UsePolicy {
	return []UsePolicy{PolicyAlways, PolicyAskOnce, PolicyAskEveryTime}
}

// Readiness layers and statuses (ReadinessResult).
const (
	LayerBinary     = "binary"
	LayerVersion    = "version"
	LayerRuntime    = "runtime"
	LayerCredential = "credential"
	LayerCapability = "capability"

	StatusReady         = "ready"
	StatusUnavailable   = "unavailable"
	StatusNotApplicable = "not-applicable"
)

// ReadinessResult is one layer of a readiness check: whether a tool is
// there and answers, whether a key is unlocked, whether a use works. The
// message is for people and never carries a secret.
type ReadinessResult struct {
	Layer, Status, Message string
}

// CredentialToolName names a tool credentials rely on.
type CredentialToolName string

// The credential tools, in the contract's order (CredentialTools).
const (
	ToolSSH       CredentialToolName = "ssh"
	ToolSSHAgent  CredentialToolName = "ssh-agent"
	ToolSSHAdd    CredentialToolName = "ssh-add"
	ToolSSHKeygen CredentialToolName = "ssh-keygen"
	ToolGPG       CredentialToolName = "gpg"
	ToolGPGConf   CredentialToolName = "gpgconf"
	ToolGit       CredentialToolName = "git"
	ToolGH        CredentialToolName = "gh"
	ToolGLab      CredentialToolName = "glab"
)

// CredentialTools lists every credential tool once, in the contract's
// order.
func CredentialTools() []CredentialToolName {
	return []CredentialToolName{ToolSSH, ToolSSHAgent, ToolSSHAdd, ToolSSHKeygen, ToolGPG, ToolGPGConf, ToolGit, ToolGH, ToolGLab}
}

// CredentialTool is the readiness of one tool.
type CredentialTool struct {
	Tool CredentialToolName
	// Path is the override when one is set (even when it no longer
	// works), else the executable found on the Hub's PATH, else "".
	Path string
	// Overridden says Path is an override.
	Overridden bool
	// Version is the first line the tool reported of itself, when it is
	// ready and reported one.
	Version string
	Results []ReadinessResult
	// Guidance says how to install or configure a tool that is not ready.
	Guidance string
}

// CredentialView is a credential as the contract shows it: its record,
// every assignment of it, and its readiness.
type CredentialView struct {
	Credential
	Assignments []CredentialAssignment
	Readiness   []ReadinessResult
}

// CredentialList is every credential as the contract lists them, in
// creation order: one snapshot, built once per change of the catalog or
// of what the vault holds, and shared by every reader (who must not
// modify it).
type CredentialList struct {
	Credentials []CredentialView

	encOnce sync.Once
	enc     []byte
}

// Encoded returns encode(l), computed once per snapshot, as
// HubState.Encoded.
func (l *CredentialList) Encoded(encode func(*CredentialList) []byte) []byte {
	l.encOnce.Do(func() { l.enc = encode(l) })
	return l.enc
}

// Requester is who asks for a rate-limited credential operation: the Hub
// user, and the client as the transport tells clients apart (its client
// key). Budgets are counted per pair.
type Requester struct {
	User, Client string
}

// NewSSHKey asks for an SSH credential: generated (PrivateKey empty;
// Passphrase required) or imported (PrivateKey an OpenSSH, PEM or PKCS#8
// key; Passphrase its own, or "" for an unencrypted one).
type NewSSHKey struct {
	Name         string
	Capabilities []Capability
	PrivateKey   string
	Passphrase   string
}

// NewOpenPGPKey asks for an OpenPGP credential: generated for UserID with
// Passphrase, or imported (PrivateKey an armored secret key, which keeps
// its own protection; UserID and Passphrase empty).
type NewOpenPGPKey struct {
	Name       string
	UserID     string
	Passphrase string
	PrivateKey string
}

// NewToken asks for a token credential.
type NewToken struct {
	Name         string
	Host         string // normalized by the Hub
	Username     string // "" sends oauth2
	Token        string
	Capabilities []Capability
}

// AssignCredentialRequest asks that a credential become a workspace's
// authentication default for Host, or its signing default.
type AssignCredentialRequest struct {
	WorkspaceID string
	Role        CredentialRole
	Host        string
	Replace     bool
	// Policy is the assignment's use policy ("" keeps the one in effect
	// for the same credential, else PolicyAlways).
	Policy UsePolicy
}

// UnassignCredentialRequest names what of a credential leaves a
// workspace: its authentication default for Host, its signing default, or
// (Role "") every assignment it has there. Stop authorizes stopping the
// running workspace session, in the same lifecycle operation.
type UnassignCredentialRequest struct {
	WorkspaceID string
	Role        CredentialRole
	Host        string
	Stop        bool
}

// WorkspaceCredentialsRequest replaces a workspace's authentication
// default for one host and/or its signing default (nil leaves a role as
// it is; at least one is required).
type WorkspaceCredentialsRequest struct {
	Authentication *AuthenticationSelection
	Signing        *string
	SigningPolicy  UsePolicy // as AssignCredentialRequest.Policy
}

// CredentialApproval is a use of a credential held until its owner allows
// or denies it (its assignment's policy asks).
type CredentialApproval struct {
	ID           string
	WorkspaceID  string
	CredentialID string
	// CredentialName is the credential's name when it was listed.
	CredentialName string
	Purpose        CredentialPurpose
	// Host is the host a login or a token is for, when it is known.
	Host        string
	RequestedAt time.Time
}

// UseOutcome is what became of one use of a credential.
type UseOutcome string

// The outcomes of a use.
const (
	UseAllowedByPolicy UseOutcome = "allowed-by-policy" // the assignment allows every use
	UseAllowedEarlier  UseOutcome = "allowed-earlier"   // ask-once: allowed earlier in the session
	UseAllowed         UseOutcome = "allowed"           // the owner allowed it
	UseDenied          UseOutcome = "denied"            // the owner denied it
	UseTimedOut        UseOutcome = "timed-out"         // nobody answered in time, or the session gave up
	UseRefused         UseOutcome = "refused"           // too many uses were waiting already
)

// CredentialUseRecord is one entry of a credential's use log.
type CredentialUseRecord struct {
	At          time.Time
	WorkspaceID string
	Purpose     CredentialPurpose
	Host        string
	Outcome     UseOutcome
	// By is the user who allowed or denied it, for those outcomes.
	By string
}
