package httpapi

import (
	"context"
	"net"
	"time"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/live"
)

// Services are the operations the handler serves, one small interface per
// family of the contract (the handlers of a family see only theirs). The
// Hub service (hub/service) implements them all: ServicesOf. Each method
// is documented where the service implements it.
type Services struct {
	Auth          AuthService
	State         StateService
	Folders       FolderService
	Workspaces    WorkspaceService
	Personal      PersonalService
	Live          LiveService
	Credentials   CredentialService
	Clones        CloneJobService
	Worktrees     WorktreeService
	AgentAccounts AgentAccountService
	Notifications NotificationService
	Health        HealthService
	Hosts         HostService
}

// AuthService is logins and device sessions (auth.go, devicesessions.go).
type AuthService interface {
	Login(ctx context.Context, req hub.LoginRequest) (hub.LoginResult, error)
	Logout(ctx context.Context, id string) error
	Authenticate(ctx context.Context, id string) (hub.DeviceSession, error)
	CheckLoginRate(clientAddr string) error
	DeviceSessionLifetime() time.Duration
	DeviceTokenLifetime() time.Duration
	DeviceSessions(ctx context.Context, caller hub.DeviceSession) ([]hub.DeviceSessionEntry, error)
	RevokeDeviceSession(ctx context.Context, caller hub.DeviceSession, handle string) (current bool, err error)
}

// StateService is the Hub state and the workspace defaults (state.go).
type StateService interface {
	State(ctx context.Context, caller hub.DeviceSession) (*hub.HubState, error)
	WorkspaceDefaults(ctx context.Context) (hub.WorkspaceDefaults, error)
	SetDefaultParent(ctx context.Context, dir *string) (hub.WorkspaceDefaults, error)
}

// FolderService is folder browsing and changes (folders.go).
type FolderService interface {
	// Browse lists dir on the machine backend names ("": the Hub's).
	Browse(ctx context.Context, backend, dir string) (hub.BrowseResult, error)
	CreateFolder(ctx context.Context, backend, parent, name string) (string, error)
	// RenameFolder and RemoveFolder change a folder on the machine backend
	// names ("": the Hub's).
	RenameFolder(ctx context.Context, backend, path, name string, stop bool) (hub.RenameResult, error)
	RemoveFolder(ctx context.Context, backend, path string, stop bool) (hub.RemoveResult, error)
}

// WorkspaceService is the registry and the workspace sessions' lifecycle,
// and the way to a running session (workspaces.go, proxy.go).
type WorkspaceService interface {
	Register(ctx context.Context, req hub.RegisterRequest) (hub.WorkspaceAction, error)
	Configure(ctx context.Context, req hub.ConfigureRequest) (hub.OnboardingResult, error)
	CreateConfigured(ctx context.Context, req hub.CreateConfiguredRequest) (hub.OnboardingResult, error)
	SetDisplayName(ctx context.Context, id, name string) (hub.WorkspaceView, error)
	StartWorkspace(ctx context.Context, id string) (hub.WorkspaceAction, error)
	StopWorkspace(ctx context.Context, id string) (hub.WorkspaceAction, error)
	ForgetWorkspace(ctx context.Context, id string) (hub.WorkspaceAction, error)
	// BeginForward checks the session runs before a request is forwarded
	// to it, and counts the request as use of the workspace until end.
	BeginForward(ctx context.Context, id string) (end func(), err error)
	DialWorkspaceSession(ctx context.Context, id string) (net.Conn, error)
	// HoldAttachment registers a terminal attachment of caller to the
	// workspace's running session; its context ends, with a cause, when
	// the attachment must end (shellattach.go).
	HoldAttachment(ctx context.Context, caller hub.DeviceSession, id string) (context.Context, func(), error)
}

// HostService is the other machines workspaces live on (hosts.go).
type HostService interface {
	Hosts(ctx context.Context) ([]hub.HostView, error)
	AddHost(ctx context.Context, name, destination string) (hub.HostView, error)
	CheckHost(ctx context.Context, name string) error
	RemoveHost(ctx context.Context, name string) error
}

// PersonalService is each user's state in each workspace
// (personalstate.go).
type PersonalService interface {
	PersonalState(ctx context.Context, caller hub.DeviceSession, id string) (hub.PersonalState, error)
	PatchPersonalState(ctx context.Context, caller hub.DeviceSession, id string, p hub.PersonalStatePatch) (hub.PersonalState, error)
	AcknowledgeActivity(ctx context.Context, caller hub.DeviceSession, id string) error
}

// LiveService is the live stream (live.go).
type LiveService interface {
	OpenLive(ctx context.Context, caller hub.DeviceSession, ws string, activity bool, subs []hub.Subscription) (*live.Stream, error)
	UpdateLiveSubscriptions(ctx context.Context, caller hub.DeviceSession, streamID string, change hub.SubscriptionChange) error
	CheckSubscription(s hub.Subscription) error
}

// ServicesOf serves every family from h, as the Hub service does.
func ServicesOf(h interface {
	AuthService
	StateService
	FolderService
	WorkspaceService
	PersonalService
	LiveService
	CredentialService
	CloneJobService
	WorktreeService
	AgentAccountService
	NotificationService
	HealthService
	HostService
}) Services {
	return Services{Auth: h, State: h, Folders: h, Workspaces: h, Personal: h, Live: h, Credentials: h, Clones: h, Worktrees: h, AgentAccounts: h, Notifications: h,
		Health: h, Hosts: h}
}

// check panics on a family left out: every route is served.
func (s Services) check() {
	if s.Auth == nil || s.State == nil || s.Folders == nil || s.Workspaces == nil || s.Personal == nil || s.Live == nil || s.Credentials == nil || s.Clones == nil || s.Worktrees == nil || s.AgentAccounts == nil || s.Notifications == nil || s.Health == nil || s.Hosts == nil {
		panic("httpapi: every field of Services is required")
	}
}
