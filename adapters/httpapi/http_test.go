package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/httpapi"
	apidoc "github.com/wharfhub/wharf/api"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func TestMethods(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	for _, tc := range []struct {
		method, path, allow string
	}{
		{"GET", "/login", "POST"},
		{"PUT", "/login", "POST"},
		{"OPTIONS", "/login", "POST"},
		{"GET", "/logout", "POST"},
		{"HEAD", "/api/hub/state", "GET"},
		{"POST", "/api/hub/state", "GET"},
		{"DELETE", "/api/hub/state", "GET"},
		{"OPTIONS", "/api/hub/state", "GET"},
		{"TRACE", "/api/hub/state", "GET"},
		{"PATCH", "/api/hub/sessions", "GET"},
		{"GET", "/api/hub/sessions/h/revoke", "POST"},
		{"POST", "/s/ws/api/events", "GET"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, tc.method, tc.path, "", bearer(id)...)
			is.Equal(r.status, http.StatusMethodNotAllowed)     // an undocumented method on a documented path
			is.Equal(r.header.Get("Allow"), tc.allow)           // says what is allowed
			is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store
			if tc.method != "HEAD" {
				is.Equal(r.errorText(t), "method not allowed") // as JSON
			}
		})
	}
}

func TestPaths(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	for _, path := range []string{
		"/api/hub/nothing",
		"/api/hub/state/",
		"/api/hub/sessions/",
		"//api/hub/state",
		"/api/hub//state",
		"/api/hub/./state",
		"/api/hub/x/../state",
		"/API/hub/state",
		"/",
		"/nothing",
	} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest("GET", s.URL, nil)
			is.NoErr(err)
			req.URL.Path = path // as sent, uncleaned
			req.Header.Set("Authorization", "Bearer "+id)
			r := s.send(t, req)
			is.Equal(r.status, http.StatusNotFound) // no redirect, no cleaning
			is.Equal(r.header.Get("Location"), "")  // never redirected
			is.Equal(r.errorText(t), "not found")   // as JSON
		})
	}
}

func TestRetiredStreams(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	for _, path := range []string{
		"/s/ws/api/events",
		"/s/ws/api/chat/conversations/events",
		"/s/ws/api/chat/conversations/claude:123/events",
		"/s/ws/api/activity",
	} {
		t.Run(path, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "GET", path, "")
			is.Equal(r.status, http.StatusGone)                 // no longer proxied
			is.Equal(r.header.Get("Cache-Control"), "no-store") // no-store
			var body struct{ Error, Replacement string }
			r.json(t, &body)
			is.Equal(body.Replacement, "/api/hub/live") // names the live stream
			is.True(body.Error != "")                   // and says why
		})
	}
}

func TestOpenAPIServed(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	r := s.do(t, "GET", "/api/openapi.yaml", "")
	is.Equal(r.status, http.StatusOK)                               // served without a session
	is.Equal(r.header.Get("Content-Type"), "application/yaml")      // as YAML
	is.True(bytes.Equal(r.body, apidoc.OpenAPI))                    // the embedded document
	is.True(bytes.Contains(r.body, []byte("11.24.0-experimental"))) // of this revision
}

func TestState(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{Version: "v1.2.3"}, nil)
	id := s.login(t, "ann", annPassword)
	r := s.do(t, "GET", "/api/hub/state", "", bearer(id)...)
	is.Equal(r.status, http.StatusOK) // state
	var st struct {
		Version              string
		HubAPIRevision       int
		WorkspaceAPIRevision int
		Workspaces           []any
	}
	r.json(t, &st)
	is.Equal(st.Version, "v1.2.3")                                                    // the product version
	is.Equal(st.HubAPIRevision, 11)                                                   // the Hub revision
	is.Equal(st.WorkspaceAPIRevision, 24)                                             // the workspace revision
	is.True(st.Workspaces != nil && len(st.Workspaces) == 0)                          // an empty list, not null
	is.True(bytes.Contains(r.body, []byte(`"workspaceDefaults":{"configured":null`))) // the defaults, none configured
	is.True(bytes.Contains(r.body, []byte(`"worktreeApi":"/api/hub/worktrees"`)))     // where the worktree family is served
	is.Equal(s.do(t, "GET", "/api/hub/state", "").status, http.StatusUnauthorized)    // needs a session
}

// panicStore panics inside View once armed, as a bug in an adapter would.
type panicStore struct {
	hub.Store
	armed bool
}

func (p *panicStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	if p.armed {
		panic("adapter bug")
	}
	return p.Store.View(ctx, fn)
}

func TestPanicAnswers500(t *testing.T) {
	is := is.New(t)
	store := &panicStore{Store: fakes.NewStore()}
	s := newServer(t, service.Config{}, store)
	id := s.login(t, "ann", annPassword)
	store.armed = true
	r := s.do(t, "GET", "/api/hub/state", "", bearer(id)...)
	is.Equal(r.status, http.StatusInternalServerError)        // a panic is a 500
	is.Equal(r.errorText(t), "internal error")                // with a generic message
	is.True(strings.Contains(s.logs.String(), "adapter bug")) // and the cause logged
	store.armed = false
	is.Equal(s.do(t, "GET", "/api/hub/state", "", bearer(id)...).status, http.StatusOK) // the server lives on
}

// failStore fails every unit of work with a cause that must stay private.
type failStore struct{ hub.Store }

var errDisk = errors.New("disk /var/secret/wharf.db: input/output error")

func (failStore) View(context.Context, func(hub.Tx) error) error {
	return errDisk
}

func TestInternalErrorHidesItsCause(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, failStore{fakes.NewStore()})
	r := s.do(t, "GET", "/api/hub/sessions", "", bearer(strings.Repeat("A", 43))...)
	is.Equal(r.status, http.StatusInternalServerError)               // a store failure is a 500
	is.Equal(r.errorText(t), "internal error")                       // with a generic message
	is.True(!bytes.Contains(r.body, []byte("/var/secret")))          // never the cause
	is.True(strings.Contains(s.logs.String(), "input/output error")) // which is logged
}

func TestRequestLog(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	id := s.login(t, "ann", annPassword)
	r := s.do(t, "POST", "/api/hub/sessions/handle-42/revoke", "", bearer(id)...)
	is.Equal(r.status, http.StatusNotFound) // an unknown handle
	logs := s.logs.String()
	is.True(strings.Contains(logs, `route=/api/hub/sessions/{sessionHandle}/revoke`)) // the route pattern is logged
	is.True(strings.Contains(logs, "status=404"))                                     // with the status
	is.True(!strings.Contains(logs, "handle-42"))                                     // but not the path's values
}

// A page on another name that resolves to the Hub (DNS rebinding) sends
// its own name as Host; the Hub answers only for IP addresses, localhost
// and the names it is given, before it authenticates anything.
func TestHostHeader(t *testing.T) {
	s := newServer(t, service.Config{}, nil, httpapi.Options{AllowedHosts: []string{"Hub.Example.", "proxy.example:8443"}})
	for _, tc := range []struct {
		host   string
		status int
	}{
		{"127.0.0.1:4700", 400},
		{"[::1]:4700", 400},
		{"10.1.2.3", 400},
		{"localhost:4700", 400},
		{"app.localhost", 400},
		{"hub.example", 400},
		{"HUB.EXAMPLE:4700", 400},
		{"proxy.example", 400},
		{"evil.example", 421},
		{"evil.example:4700", 421},
		{"127.0.0.1.evil.example", 421},
		{"localhost.evil.example", 421},
	} {
		t.Run(tc.host, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "POST", "/login", `{}`, "Host", tc.host)
			is.Equal(r.status, tc.status) // 400: the Hub read the (empty) login; 421: it did not
			if tc.status == http.StatusMisdirectedRequest {
				is.Equal(r.errorText(t), "misdirected request: this Hub does not answer for that host name")
			}
		})
	}
}

// Every answer carries nosniff, whoever wrote it; under TLS every answer
// also carries HSTS.
func TestSecurityHeaders(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	s.repo(t, "/home/ann/app")
	auth := bearer(s.login(t, "ann", annPassword))
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":true}`, auth...)
	for _, path := range []string{"/api/openapi.yaml", "/api/hub/state", "/nope", "/s/app/api/session"} {
		r := s.do(t, "GET", path, "", auth...)
		is.Equal(r.header.Get("X-Content-Type-Options"), "nosniff") // on every answer
		is.Equal(r.header.Get("Strict-Transport-Security"), "")     // no HSTS over plain HTTP
	}
	l := s.openLive(t, "ws=app", auth...)
	is.Equal(l.resp.Header.Get("X-Content-Type-Options"), "nosniff") // on the live stream too

	tlsSrv := httptest.NewTLSServer(httpapi.NewHandler(httpapi.ServicesOf(s.hub), httpapi.Options{}))
	defer tlsSrv.Close()
	resp, err := tlsSrv.Client().Get(tlsSrv.URL + "/api/hub/state")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusUnauthorized)                         // answered over TLS
	is.Equal(resp.Header.Get("Strict-Transport-Security"), "max-age=31536000") // with HSTS
	is.Equal(resp.Header.Get("X-Content-Type-Options"), "nosniff")
}

// Pages get the GET and HEAD requests outside /api/ and /s/, after the
// Host check; everything else stays the API's.
func TestPages(t *testing.T) {
	is := is.New(t)
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("page " + r.URL.Path))
	})
	s := newServer(t, service.Config{}, nil, httpapi.Options{Pages: pages})
	for _, tc := range []struct {
		method, path, host string
		status             int
		page               bool
	}{
		{"GET", "/", "", 200, true},
		{"GET", "/login", "", 200, true},
		{"HEAD", "/settings", "", 200, true},
		{"POST", "/login", "", 400, false},
		{"GET", "/api/hub/state", "", 401, false},
		{"GET", "/api/nope", "", 404, false},
		{"GET", "/s/app/api/session", "", 401, false},
		{"GET", "/", "evil.example", 421, false},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.host, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(""))
			is.NoErr(err)
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultTransport.RoundTrip(req)
			is.NoErr(err)
			body := new(bytes.Buffer)
			body.ReadFrom(resp.Body)
			resp.Body.Close()
			is.Equal(resp.StatusCode, tc.status)                                               // routed as expected
			is.Equal(strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"), tc.page) // by the pages or the API
			is.Equal(resp.Header.Get("X-Content-Type-Options"), "nosniff")                     // nosniff either way
		})
	}
}
