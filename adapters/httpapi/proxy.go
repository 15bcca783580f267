package httpapi

import (
	"context"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The Hub forwards /s/{workspaceId}/... to the workspace's running child
// over the child's private socket. That protocol is internal (versioned by
// the workspace revision); only personal state, the activity
// acknowledgement and the retired stream routes under /s/ are the Hub's own.

// sessionHostSuffix names a workspace's child as an HTTP host, so the one
// transport can pool connections per child and dial by workspace id.
const sessionHostSuffix = ".session.wharf.invalid"

// newSessionTransport returns the transport to the workspaces' children:
// a request to host <id>.session.wharf.invalid is sent over a connection
// DialWorkspaceSession opens to workspace id's running child. The
// reverse proxy and the terminal attachments (shellattach.go) share it.
func (a *api) newSessionTransport() *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			return a.workspaces.DialWorkspaceSession(ctx, strings.TrimSuffix(host, sessionHostSuffix))
		},
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		DisableCompression:    true,
	}
}

func (a *api) newProxy(transport http.RoundTripper) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = pr.In.PathValue("workspaceId") + sessionHostSuffix
			pr.Out.Host = pr.Out.URL.Host
			// The Hub session is the Hub's; the child never sees it.
			pr.Out.Header.Del("Authorization")
			pr.Out.Header.Del("Cookie")
		},
		// The child's headers replace the Hub's; the Hub's rules for
		// every response still hold on a forwarded one.
		ModifyResponse: func(resp *http.Response) error {
			resp.Header["X-Content-Type-Options"] = headerNosniff
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if clientGone(r, err) {
				a.logFailure(r, "workspace session request abandoned by its client", err)
				return // nobody is left to answer
			}
			a.writeError(w, r, hub.Wrap(hub.Unavailable, err, "workspace session unreachable"))
		},
		// Without it the proxy writes to the standard logger, outside the
		// operator's format and level.
		ErrorLog: log.New(proxyLog{a.log}, "", 0),
	}
}

// proxyLog puts the lines the reverse proxy logs itself (a response
// body that failed mid-copy) into the Hub's log under the proxy's route.
// Those lines carry no request; one that says the copy was cancelled is
// the client's leaving and goes to DEBUG, any other to WARN.
type proxyLog struct{ log *slog.Logger }

// proxyPattern is the pattern of the proxy's route in routes().
const proxyPattern = "/s/{workspaceId}/"

func (p proxyLog) Write(b []byte) (int, error) {
	msg := strings.TrimSpace(string(b))
	level := slog.LevelWarn
	if strings.Contains(msg, context.Canceled.Error()) {
		level = slog.LevelDebug
	}
	p.log.LogAttrs(context.Background(), level, "workspace session response failed", slog.String("op", "-"),
		slog.String("route", proxyPattern), slog.String("error", msg))
	return len(b), nil
}

// handleProxy forwards a request to the workspace's child; a stopped
// workspace answers 503 and an unknown one 404 without contacting anyone.
func (a *api) handleProxy(w http.ResponseWriter, r *http.Request, _ caller) error {
	end, err := a.workspaces.BeginForward(r.Context(), r.PathValue("workspaceId"))
	if err != nil {
		return err
	}
	defer end()
	if r.ContentLength != 0 {
		// The server's read deadline suits the Hub's own small bodies; a
		// workspace's (images for an agent) may be larger.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadTime(r.ContentLength)))
	}
	a.proxy.ServeHTTP(w, r)
	return nil
}

// uploadTime is how long a forwarded body of n bytes (-1: unknown) may
// take to arrive: 30 s plus what 256 KiB/s needs, at most 10 minutes.
func uploadTime(n int64) time.Duration {
	const most = 10 * time.Minute
	if n < 0 {
		return most
	}
	return min(30*time.Second+time.Duration(n/(256<<10))*time.Second, most)
}
