package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/httpapi"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

func TestTheLivenessProbeAnswersAnyoneAnyHost(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	for _, host := range []string{"", "wharf:4700", "evil.example"} {
		t.Run("host "+host, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest("GET", s.URL+"/healthz", nil)
			is.NoErr(err) // a request
			if host != "" {
				req.Host = host
			}
			r := s.send(t, req)
			is.Equal(r.status, http.StatusOK)                   // alive, without a session, whatever the Host
			is.Equal(string(r.body), "ok\n")                    // and nothing else
			is.Equal(r.header.Get("Cache-Control"), "no-store") // never cached
		})
	}
}

func TestTheReadinessProbeFollowsRecoveryAndShutdown(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	ready := func() int {
		r := s.do(t, "GET", "/readyz", "")
		is.Equal(r.header.Get("Cache-Control"), "no-store") // never cached
		return r.status
	}
	is.Equal(ready(), http.StatusServiceUnavailable) // not ready before recovery
	is.NoErr(s.hub.Recover(context.Background()))    // recovered
	is.Equal(ready(), http.StatusOK)                 // ready
	s.hub.Drain()
	is.Equal(ready(), http.StatusServiceUnavailable) // not ready once the shutdown began
}

func TestTheReadinessProbeAnswers503WhileAJournalIsPending(t *testing.T) {
	is := is.New(t)
	store := fakes.NewStore()
	is.NoErr(store.Update(context.Background(), func(tx hub.Tx) error {
		_, err := tx.AddJournal(hub.Journal{Kind: hub.JournalFolderRename, Data: []byte(`{"version":99}`), CreatedAt: time.Now()})
		return err
	})) // a journal no recovery can settle
	s := newServer(t, service.Config{}, store)
	is.NoErr(s.hub.Recover(context.Background())) // recovery ends, leaving it pending
	is.Equal(s.hub.PendingJournals(), 1)          // pending
	r := s.do(t, "GET", "/readyz", "")
	is.Equal(r.status, http.StatusServiceUnavailable) // not ready
	is.Equal(string(r.body), "not ready\n")           // and no detail
}

// observedRequest is one request a test observer recorded.
type observedRequest struct {
	method, pattern string
	status          int
}

// observer records every request by the route the handler resolved.
type observer struct {
	mu       sync.Mutex
	routes   []string // every (method pattern) a recorder was asked for
	recorded []observedRequest
}

type recorder struct {
	o               *observer
	method, pattern string
}

func (o *observer) Route(method, pattern string) httpapi.RequestRecorder {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.routes = append(o.routes, method+" "+pattern)
	return recorder{o, method, pattern}.record
}

func (r recorder) record(status int, took time.Duration) {
	r.o.mu.Lock()
	defer r.o.mu.Unlock()
	r.o.recorded = append(r.o.recorded, observedRequest{r.method, r.pattern, status})
}

func (o *observer) last() observedRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.recorded) == 0 {
		return observedRequest{}
	}
	return o.recorded[len(o.recorded)-1]
}

func TestEveryRequestIsRecordedUnderItsRouteNeverItsPath(t *testing.T) {
	o := &observer{}
	s := newServer(t, service.Config{}, nil, httpapi.Options{Requests: o})
	id := s.login(t, "ann", annPassword)
	for _, tc := range []struct {
		name, method, path, host string
		want                     observedRequest
	}{
		{"a route without wildcards", "GET", "/api/hub/state", "", observedRequest{"GET", "/api/hub/state", 200}},
		{"a route with a wildcard", "POST", "/api/hub/sessions/some-id/start", "", observedRequest{"POST", "/api/hub/sessions/{workspaceId}/start", 404}},
		{"a forwarded request", "PUT", "/s/nope/api/anything", "", observedRequest{"PUT", "/s/{workspaceId}/", 404}},
		{"a method no route has", "DELETE", "/api/hub/state", "", observedRequest{"other", "/api/hub/state", 405}},
		{"a path no route has", "GET", "/api/hub/nothing/here", "", observedRequest{"other", "[unmatched]", 404}},
		{"a foreign host", "GET", "/api/hub/state", "evil.example", observedRequest{"other", "[misdirected]", 421}},
		{"a probe", "GET", "/readyz", "", observedRequest{"GET", "/readyz", 503}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			req, err := http.NewRequest(tc.method, s.URL+tc.path, nil)
			is.NoErr(err) // a request
			req.Header.Set("Authorization", "Bearer "+id)
			if tc.host != "" {
				req.Host = tc.host
			}
			s.send(t, req)
			is.Equal(o.last(), tc.want) // recorded under its route, method and status
		})
	}
	is := is.New(t)
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.routes {
		is.True(!strings.Contains(r, "some-id") && !strings.Contains(r, "nope") && !strings.Contains(r, "nothing")) // no recorder is ever made of a request's path
	}
	is.True(slices.Contains(o.routes, "GET /api/hub/state")) // recorders are made of the route table, once
}
