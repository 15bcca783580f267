package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/hub/service"
)

// TestAClientBehindAProxyIsCappedInRequestsInFlightAndOthersAreNot holds
// a client's places with live streams (requests that stay in flight): its
// next request answers 429, another client behind the same proxy is
// served, and a place comes back once a stream ends.
func TestAClientBehindAProxyIsCappedInRequestsInFlightAndOthersAreNot(t *testing.T) {
	is := is.New(t)
	opts := behindProxy
	opts.MaxRequestsPerForwardedClient = 2
	s := newServer(t, service.Config{}, nil, opts)
	sid := s.login(t, "ann", annPassword, "X-Forwarded-For", "198.51.100.1")
	auth := []string{"Authorization", "Bearer " + sid}
	s.repo(t, "/home/ann/app")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":true}`, auth...)
	from := func(client string) []string { return append([]string{"X-Forwarded-For", client}, auth...) }

	first := s.openLive(t, "ws=app", from("203.0.113.7")...)
	s.openLive(t, "ws=app", from("203.0.113.7")...)
	r := s.do(t, "GET", "/api/hub/state", "", from("203.0.113.7")...)
	is.Equal(r.status, http.StatusTooManyRequests)                           // a third request in flight is refused
	is.Equal(r.header.Get("Retry-After"), "1")                               // saying when to try again
	is.True(strings.Contains(r.errorText(t), "too many requests in flight")) // and why
	r = s.do(t, "GET", "/api/hub/state", "", from("203.0.113.8")...)
	is.Equal(r.status, http.StatusOK) // another client behind the proxy is served
	r = s.do(t, "GET", "/api/hub/state", "", auth...)
	is.Equal(r.status, http.StatusOK) // and so is the proxy's own request, which names no client

	first.resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for attempt := 0; ; attempt++ {
		r = s.do(t, "GET", "/api/hub/state", "", from("203.0.113.7")...)
		if r.status == http.StatusOK || attempt == 500 || time.Now().After(deadline) {
			break
		}
	}
	is.Equal(r.status, http.StatusOK) // the ended stream's place is given back
}

// TestWithoutATrustedProxyNoRequestIsCappedPerClient checks the bound
// applies only where the connection cap cannot see the client.
func TestWithoutATrustedProxyNoRequestIsCappedPerClient(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil, httpapi.Options{MaxRequestsPerForwardedClient: 1})
	sid := s.login(t, "ann", annPassword)
	auth := []string{"Authorization", "Bearer " + sid, "X-Forwarded-For", "203.0.113.7"}
	s.repo(t, "/home/ann/app")
	s.do(t, "POST", "/api/hub/workspaces", `{"path":"/home/ann/app","start":true}`, auth...)
	s.openLive(t, "ws=app", auth...)
	r := s.do(t, "GET", "/api/hub/state", "", auth...)
	is.Equal(r.status, http.StatusOK) // a direct client is bounded by the connection cap instead
}
