// Package httpapi serves the Hub Service Interface over HTTP: routing,
// authentication, the same-origin check, strict JSON decoding and the
// mapping of core errors to statuses. It holds no domain rules; those live
// in package hub/service.
package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Options tunes the handler. The zero value is ready to use.
type Options struct {
	// Logger receives request and error logs. They never contain a password,
	// a session id or a cookie. Default discards.
	Logger *slog.Logger
	// TrustedProxies are the peers whose X-Forwarded-For is believed: for a
	// request from one of them, the last hop of the header (the one the
	// proxy itself appended) is the client address that login limits
	// count. From any other peer the header is ignored, so a client cannot
	// pick a fresh address for each login attempt. Default none.
	TrustedProxies []netip.Prefix
	// AllowedHosts are the host names, besides IP addresses and
	// localhost, that requests may name in their Host header: the Hub's
	// public names behind a proxy, the names of its TLS certificate. Any
	// other name answers 421 (see host.go). Default none.
	AllowedHosts []string
	// PublicURL, when set, is the address people reach the Hub by through
	// a reverse proxy (scheme and host, no path): its host is allowed,
	// and a request naming it is known to have come over its scheme, which
	// the cookies, HSTS and the same-origin check follow (publicurl.go).
	// Default none.
	PublicURL *url.URL
	// MaxRequestsPerForwardedClient bounds the requests one client behind
	// a trusted proxy has in flight at once; beyond it the Hub answers 429
	// (inflight.go). Default DefaultMaxRequestsPerForwardedClient.
	MaxRequestsPerForwardedClient int
	// Pages, when set, serves the GET and HEAD requests for paths outside
	// the API (/api/... and /s/...): the browser dashboard's pages and
	// assets (adapters/web), including GET /login, whose POST is the
	// API's. It gets them after the Host check and with nosniff (and HSTS)
	// set, and sets its own other headers.
	Pages http.Handler
	// Requests, when set, records every request by route, status and
	// duration (health.go): the request metrics. Default none, which
	// costs nothing.
	Requests RequestObserver
}

// anyMethod routes every method of a pattern to one handler.
const anyMethod = "*"

// access says how a route authenticates.
type access int

const (
	public        access = iota // no session needed
	authenticated               // bearer or cookie; cookie requests that change state must be same-origin
)

// caller is the authenticated party of a request.
type caller struct {
	hub.DeviceSession
	viaCookie bool
}

type handler func(w http.ResponseWriter, r *http.Request, c caller) error

type route struct {
	method  string
	pattern string // net/http.ServeMux pattern, without the method
	op      string // the operationId in api/openapi.yaml; "" for routes outside the contract
	access  access
	h       handler
}

// routes is the one table of every route the handler serves.
func (a *api) routes() []route {
	return []route{
		{"POST", "/login", "hubLogin", public, a.handleLogin},
		{"POST", "/logout", "hubLogout", public, a.handleLogout},
		{"GET", "/api/hub/sessions", "hubListDeviceSessions", authenticated, a.handleListDeviceSessions},
		{"POST", "/api/hub/sessions/{sessionHandle}/revoke", "hubRevokeDeviceSession", authenticated, a.handleRevokeDeviceSession},
		{"GET", "/api/hub/state", "hubGetState", authenticated, a.handleState},
		{"GET", "/api/hub/browse", "hubBrowse", authenticated, a.handleBrowse},
		{"GET", "/api/hub/hosts", "hubListHosts", authenticated, a.handleListHosts},
		{"POST", "/api/hub/hosts", "hubAddHost", authenticated, a.handleAddHost},
		{"POST", "/api/hub/hosts/{hostName}/check", "hubCheckHost", authenticated, a.handleCheckHost},
		{"POST", "/api/hub/hosts/{hostName}/remove", "hubRemoveHost", authenticated, a.handleRemoveHost},
		{"POST", "/api/hub/folders/create", "hubCreateFolder", authenticated, a.handleCreateFolder},
		{"POST", "/api/hub/folders/rename", "hubRenameFolder", authenticated, a.handleRenameFolder},
		{"POST", "/api/hub/folders/remove", "hubRemoveFolder", authenticated, a.handleRemoveFolder},
		{"GET", "/api/hub/settings/workspace-defaults", "hubGetWorkspaceDefaults", authenticated, a.handleGetDefaults},
		{"POST", "/api/hub/settings/workspace-defaults", "hubUpdateWorkspaceDefaults", authenticated, a.handleSetDefaults},
		{"POST", "/api/hub/workspaces", "hubCreateWorkspace", authenticated, a.handleCreateWorkspace},
		{"POST", "/api/hub/workspaces/configure", "hubConfigureWorkspace", authenticated, a.handleConfigureWorkspace},
		{"POST", "/api/hub/workspaces/create", "hubCreateConfiguredWorkspace", authenticated, a.handleCreateConfiguredWorkspace},
		{"POST", "/api/hub/workspaces/{workspaceId}/display-name", "hubUpdateWorkspaceDisplayName", authenticated, a.handleDisplayName},
		{"POST", "/api/hub/sessions/{workspaceId}/start", "hubStartWorkspace", authenticated, a.lifecycle(startWorkspace)},
		{"POST", "/api/hub/sessions/{workspaceId}/stop", "hubStopWorkspace", authenticated, a.lifecycle(stopWorkspace)},
		{"POST", "/api/hub/workspaces/{workspaceId}/forget", "hubForgetWorkspace", authenticated, a.lifecycle(forgetWorkspace)},
		{"GET", "/s/{workspaceId}/api/personal-state", "workspaceGetPersonalState", authenticated, a.handleGetPersonalState},
		{"PATCH", "/s/{workspaceId}/api/personal-state", "workspacePatchPersonalState", authenticated, a.handlePatchPersonalState},
		{"POST", "/s/{workspaceId}/api/activity-viewed", "hubAcknowledgeWorkspaceActivity", authenticated, a.handleActivityViewed},
		{"GET", "/s/{workspaceId}/api/shells/{shellId}/attach", "workspaceAttachShell", authenticated, a.handleAttachShell},
		{"GET", "/api/hub/credentials", "hubListCredentials", authenticated, a.handleListCredentials},
		{"GET", "/api/hub/credential-tools", "hubListCredentialTools", authenticated, a.handleListCredentialTools},
		{"GET", "/api/hub/credentials/{credentialId}/public-key", "hubGetCredentialPublicKey", authenticated, a.handleCredentialPublicKey},
		{"POST", "/api/hub/credentials/ssh/generate", "hubGenerateSshCredential", authenticated, a.handleGenerateSSH},
		{"POST", "/api/hub/credentials/ssh/import", "hubImportSshCredential", authenticated, a.handleImportSSH},
		{"POST", "/api/hub/credentials/openpgp/generate", "hubGenerateOpenPgpCredential", authenticated, a.handleGenerateOpenPGP},
		{"POST", "/api/hub/credentials/openpgp/import", "hubImportOpenPgpCredential", authenticated, a.handleImportOpenPGP},
		{"POST", "/api/hub/credentials/token", "hubCreateTokenCredential", authenticated, a.handleCreateToken},
		{"POST", "/api/hub/credential-tools/{tool}", "hubSetCredentialTool", authenticated, a.handleSetCredentialTool},
		{"POST", "/api/hub/credential-tools/{tool}/test", "hubTestCredentialTool", authenticated, a.handleTestCredentialTool},
		{"POST", "/api/hub/credentials/{credentialId}/unlock", "hubUnlockCredential", authenticated, a.handleUnlockCredential},
		{"POST", "/api/hub/credentials/{credentialId}/lock", "hubLockCredential", authenticated, a.credentialState(lockCredential)},
		{"POST", "/api/hub/credentials/{credentialId}/enable", "hubEnableCredential", authenticated, a.credentialState(enableCredential)},
		{"POST", "/api/hub/credentials/{credentialId}/disable", "hubDisableCredential", authenticated, a.credentialState(disableCredential)},
		{"POST", "/api/hub/credentials/{credentialId}/assign", "hubAssignCredential", authenticated, a.handleAssignCredential},
		{"POST", "/api/hub/credentials/{credentialId}/unassign", "hubUnassignCredential", authenticated, a.handleUnassignCredential},
		{"POST", "/api/hub/credentials/{credentialId}/test", "hubTestCredential", authenticated, a.handleTestCredential},
		{"POST", "/api/hub/credentials/{credentialId}/delete", "hubDeleteCredential", authenticated, a.handleDeleteCredential},
		{"GET", "/api/hub/credentials/{credentialId}/uses", "hubListCredentialUses", authenticated, a.handleCredentialUses},
		{"GET", "/api/hub/credential-approvals", "hubListCredentialApprovals", authenticated, a.handleListApprovals},
		{"POST", "/api/hub/credential-approvals/{approvalId}", "hubDecideCredentialApproval", authenticated, a.handleDecideApproval},
		{"POST", "/api/hub/workspaces/{workspaceId}/credential-assignments", "hubAssignWorkspaceCredentials", authenticated, a.handleAssignWorkspaceCredentials},
		{"POST", "/api/hub/clone-jobs", "hubCreateCloneJob", authenticated, a.handleCreateCloneJob},
		{"HEAD", "/api/hub/clone-jobs/{jobId}/events", "hubProbeCloneJobEvents", authenticated, a.handleProbeCloneJob},
		{"GET", "/api/hub/clone-jobs/{jobId}/events", "hubStreamCloneJobEvents", authenticated, a.handleCloneJobEvents},
		{"POST", "/api/hub/clone-jobs/{jobId}/input", "hubSendCloneJobInput", authenticated, a.handleCloneJobInput},
		{"POST", "/api/hub/clone-jobs/{jobId}/cancel", "hubCancelCloneJob", authenticated, a.handleCancelCloneJob},
		{"GET", "/api/hub/worktrees", "hubListWorktrees", authenticated, a.handleListWorktrees},
		{"POST", "/api/hub/worktrees/fetch", "hubFetchWorktreeRefs", authenticated, a.handleFetchWorktreeRefs},
		{"POST", "/api/hub/worktrees/create", "hubCreateWorktree", authenticated, a.handleCreateWorktree},
		{"POST", "/api/hub/worktrees/open", "hubOpenWorktree", authenticated, a.worktreeOp(true, WorktreeService.OpenWorktree)},
		{"POST", "/api/hub/worktrees/register", "hubRegisterWorktree", authenticated, a.worktreeOp(true, WorktreeService.RegisterWorktree)},
		{"POST", "/api/hub/worktrees/forget", "hubForgetWorktree", authenticated, a.worktreeOp(false, WorktreeService.ForgetWorktree)},
		{"POST", "/api/hub/worktrees/preflight-delete", "hubPreflightDeleteWorktree", authenticated, a.handlePreflightDeleteWorktree},
		{"POST", "/api/hub/worktrees/delete", "hubDeleteWorktree", authenticated, a.handleDeleteWorktree},
		{"GET", "/api/hub/notifications", "hubGetNotifications", authenticated, a.handleGetNotifications},
		{"PUT", "/api/hub/notifications", "hubEnrollNotifications", authenticated, a.handleEnrollNotifications},
		{"DELETE", "/api/hub/notifications", "hubRemoveNotifications", authenticated, a.handleRemoveNotifications},
		{"POST", "/api/hub/notifications/acknowledgements", "hubAcknowledgeNotification", authenticated, a.handleAcknowledgeNotification},
		{"POST", "/api/hub/notifications/test", "hubTestNotification", authenticated, a.handleTestNotification},
		{"GET", "/api/hub/agent-accounts", "hubGetAgentAccounts", authenticated, a.handleGetAgentAccounts},
		{"POST", "/api/hub/agent-accounts/key", "hubConnectAgentAccountKey", authenticated, a.handleAgentAccountKey},
		{"POST", "/api/hub/agent-accounts/login", "hubStartAgentAccountLogin", authenticated, a.handleAgentAccountLogin},
		{"POST", "/api/hub/agent-accounts/attempts/{attemptId}/code", "hubSubmitAgentAccountCode", authenticated, a.handleAgentAccountCode},
		{"POST", "/api/hub/agent-accounts/attempts/{attemptId}/redirect", "hubSubmitAgentAccountRedirect", authenticated, a.handleAgentAccountRedirect},
		{"POST", "/api/hub/agent-accounts/attempts/{attemptId}/cancel", "hubCancelAgentAccountLogin", authenticated, a.handleAgentAccountCancel},
		{"POST", "/api/hub/agent-accounts/logout", "hubLogoutAgentAccount", authenticated, a.handleAgentAccountLogout},
		{"POST", "/api/hub/agent-accounts/activate", "hubActivateAgentAccountCredential", authenticated, a.handleAgentAccountActivate},
		{"GET", "/api/hub/live", "hubStreamLive", authenticated, a.handleLive},
		{"POST", "/api/hub/live/{streamId}/subscriptions", "hubUpdateLiveSubscriptions", authenticated, a.handleLiveSubscriptions},

		// Outside the contract.
		{"GET", "/api/openapi.yaml", "", public, a.handleOpenAPI},
		{"GET", "/s/{workspaceId}/api/events", "", public, handleRetired},
		{"GET", "/s/{workspaceId}/api/chat/conversations/events", "", public, handleRetired},
		{"GET", "/s/{workspaceId}/api/chat/conversations/{conversationId}/events", "", public, handleRetired},
		{"GET", "/s/{workspaceId}/api/activity", "", public, handleRetired},
		{anyMethod, proxyPattern, "", authenticated, a.handleProxy},

		// Wharf's diagnostics, documented as extensions (health.go).
		{"GET", healthPath, "wharfHealth", public, a.handleHealth},
		{"GET", readyPath, "wharfReady", public, a.handleReady},
	}
}

// Route describes one served route, for tooling and the route-coverage test.
type Route struct {
	Method      string
	Pattern     string
	OperationID string // "" for routes outside the contract
}

// Routes lists every route NewHandler serves.
func Routes() []Route {
	var rs []Route
	for _, rt := range (&api{}).routes() {
		rs = append(rs, Route{Method: rt.method, Pattern: rt.pattern, OperationID: rt.op})
	}
	return rs
}

type api struct {
	auth          AuthService
	state         StateService
	folders       FolderService
	workspaces    WorkspaceService
	personal      PersonalService
	live          LiveService
	credentials   CredentialService
	clones        CloneJobService
	worktrees     WorktreeService
	accounts      AgentAccountService
	notifications NotificationService
	health        HealthService
	machines      HostService // the hosts family (hosts.go); hosts is Options.AllowedHosts
	proxy         *httputil.ReverseProxy
	shells        *http.Client // dials the children's terminal WebSockets (shellattach.go)
	log           *slog.Logger
	mux           *http.ServeMux
	exact         map[string]http.Handler // the routes without wildcards, by path
	proxies       []netip.Prefix
	hosts         map[string]struct{} // Options.AllowedHosts, normalized
	public        publicURL           // Options.PublicURL
	forwarded     *forwardedLimiter   // requests in flight per client behind a trusted proxy
	ops           map[string]string   // operation ids by method and pattern, for the logs
	pages         http.Handler        // Options.Pages
	// The recorders of the requests no route takes (health.go); nil
	// without Options.Requests.
	timed                          bool // Options.Requests is set
	pagesRec, misdirected, nowhere RequestRecorder
	probes                         map[string]http.Handler // the probes, served before the Host check
}

// NewHandler returns the HTTP handler of the Hub API over s, every
// family of which is required.
func NewHandler(s Services, opts Options) http.Handler {
	s.check()
	a := &api{auth: s.Auth, state: s.State, folders: s.Folders, workspaces: s.Workspaces, personal: s.Personal, live: s.Live, credentials: s.Credentials, clones: s.Clones, worktrees: s.Worktrees, accounts: s.AgentAccounts, notifications: s.Notifications, health: s.Health, machines: s.Hosts, log: opts.Logger, mux: http.NewServeMux(), exact: map[string]http.Handler{}, proxies: opts.TrustedProxies,
		hosts: normalizeHosts(opts.AllowedHosts), public: newPublicURL(opts.PublicURL), ops: map[string]string{}, pages: opts.Pages,
		forwarded: newForwardedLimiter(opts.MaxRequestsPerForwardedClient)}
	if opts.PublicURL != nil {
		for name := range normalizeHosts([]string{opts.PublicURL.Host}) {
			a.hosts[name] = struct{}{}
		}
	}
	sessions := a.newSessionTransport()
	a.proxy = a.newProxy(sessions)
	a.shells = &http.Client{Transport: sessions}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	byPattern := map[string]map[string]route{}
	for _, rt := range a.routes() {
		a.ops[rt.method+" "+rt.pattern] = rt.op
		if byPattern[rt.pattern] == nil {
			byPattern[rt.pattern] = map[string]route{}
		}
		byPattern[rt.pattern][rt.method] = rt
	}
	if o := opts.Requests; o != nil {
		a.timed = true
		a.pagesRec, a.misdirected, a.nowhere = o.Route(methodOther, patternPages), o.Route(methodOther, patternMisdirected),
			o.Route(methodOther, patternUnmatched)
	}
	a.probes = map[string]http.Handler{}
	for pattern, methods := range byPattern {
		h := a.dispatch(methods, newRecorders(opts.Requests, pattern, methods))
		a.mux.Handle(pattern, h)
		if !strings.ContainsAny(pattern, "{") && !strings.HasSuffix(pattern, "/") {
			a.exact[pattern] = h
		}
		if pattern == healthPath || pattern == readyPath {
			a.probes[pattern] = h
		}
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusNotFound, "not found")
	})
	return a
}

// dispatch routes by method itself rather than through ServeMux method
// patterns, because ServeMux would also serve HEAD on GET routes and answer
// other methods in plain text; the spec wants 405 as JSON, HEAD only where
// documented.
func (a *api) dispatch(methods map[string]route, recs *recorders) http.Handler {
	allowed := make([]string, 0, len(methods))
	for m := range methods {
		allowed = append(allowed, m)
	}
	sort.Strings(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := methods[r.Method]
		if !ok {
			rt, ok = methods[anyMethod]
		}
		if sw, isSW := w.(*statusWriter); isSW && recs != nil {
			sw.rec = recs.other
			if ok {
				sw.rec = recs.of(r.Method)
			}
		}
		if !ok {
			w.Header().Set("Allow", allow)
			writeStatus(w, http.StatusMethodNotAllowed, "method not allowed")
			return
		}
		var c caller
		if rt.access == authenticated {
			var err error
			c.DeviceSession, c.viaCookie, err = a.authenticate(r)
			if err != nil {
				a.writeError(w, r, err)
				return
			}
			if c.viaCookie && r.Method != http.MethodGet && r.Method != http.MethodHead && !a.sameOrigin(r) {
				writeStatus(w, http.StatusForbidden, "cross-origin request rejected")
				return
			}
		}
		if err := rt.h(w, r, c); err != nil {
			a.writeError(w, r, err)
		}
	})
}

// ServeHTTP refuses non-canonical paths (no redirects: a redirected POST
// surprises clients), recovers panics as JSON 500s and logs each request.
func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	debug := a.log.Enabled(r.Context(), slog.LevelDebug)
	var start time.Time
	if debug || a.timed {
		start = time.Now()
	}
	sw := &statusWriter{ResponseWriter: w, rec: a.nowhere}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			a.log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
				slog.String("op", a.opOf(r)), slog.String("method", r.Method), slog.String("route", r.Pattern), slog.Any("panic", p))
			if sw.status == 0 {
				writeStatus(sw, http.StatusInternalServerError, "internal error")
			}
		}
		sw.record(start)
		if debug {
			a.log.LogAttrs(r.Context(), slog.LevelDebug, "request",
				slog.String("op", a.opOf(r)), slog.String("method", r.Method), slog.String("route", r.Pattern),
				slog.Int("status", sw.status), slog.Duration("took", time.Since(start)))
		}
	}()
	h := sw.Header()
	h["X-Content-Type-Options"] = headerNosniff
	if r.TLS != nil || (a.public.https && a.public.names(r.Host)) {
		h["Strict-Transport-Security"] = headerHSTS
	}
	if h, ok := a.probes[r.URL.Path]; ok {
		// Before the Host check: a probe's answer holds nothing a page
		// on another name could use (health.go).
		r.Pattern = r.URL.Path
		h.ServeHTTP(sw, r)
		return
	}
	if !a.hostAllowed(r.Host) {
		sw.rec = a.misdirected
		writeStatus(sw, http.StatusMisdirectedRequest, "misdirected request: this Hub does not answer for that host name")
		return
	}
	release, ok := a.admitForwarded(sw, r)
	if !ok {
		return
	}
	defer release()
	if p := r.URL.Path; p == "" || p[0] != '/' || (p != "/" && (path.Clean(p) != p)) {
		writeStatus(sw, http.StatusNotFound, "not found")
		return
	}
	if a.pages != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		!strings.HasPrefix(r.URL.Path, "/api/") && !strings.HasPrefix(r.URL.Path, "/s/") {
		sw.rec = a.pagesRec
		a.pages.ServeHTTP(sw, r)
		return
	}
	// A route without wildcards is found by one map lookup; the busiest
	// ones (state, login) are such routes.
	if h, ok := a.exact[r.URL.Path]; ok {
		r.Pattern = r.URL.Path
		h.ServeHTTP(sw, r)
		return
	}
	a.mux.ServeHTTP(sw, r)
}

// opOf names the operation of a routed request for the logs: its
// operationId, or "-" for a route outside the contract (the workspace
// proxy, the retired stream routes) or no route at all.
func (a *api) opOf(r *http.Request) string {
	op, ok := a.ops[r.Method+" "+r.Pattern]
	if !ok {
		op = a.ops[anyMethod+" "+r.Pattern]
	}
	if op == "" {
		return "-"
	}
	return op
}

// statusWriter records the status of a response for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	rec    RequestRecorder // the route's, once known (health.go); nil: none
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
