package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub/service"
)

// metricsHub is a daemon with metrics on, its API and its metrics each
// served on a loopback listener, and a user.
type metricsHub struct {
	d             *daemon.Daemon
	api, metrics  string             // base URLs
	stop          context.CancelFunc // ends the API's serving, not the metrics'
	served, mserv chan error
}

const metricsUserPassword = "a long enough password"

func openMetricsHub(t *testing.T) *metricsHub {
	t.Helper()
	d, err := daemon.Open(t.Context(), daemon.Config{StateDir: privateDir(t), Metrics: true,
		Hub:   service.Config{Password: service.PasswordParams{Memory: 64, Time: 1, Threads: 1}},
		Adapt: func(p *service.Ports) { p.Backend = fakes.NewBackend() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Hub().AddUser(t.Context(), "ann", metricsUserPassword); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mctx, mcancel := context.WithCancel(context.Background())
	m := &metricsHub{d: d, api: "http://" + ln.Addr().String(), metrics: "http://" + mln.Addr().String(), stop: cancel,
		served: make(chan error, 1), mserv: make(chan error, 1)}
	go func() { m.served <- d.Serve(ctx, ln, nil) }()
	go func() { m.mserv <- d.ServeMetrics(mctx, mln) }()
	t.Cleanup(func() {
		cancel()
		mcancel()
		<-m.served
		<-m.mserv
	})
	return m
}

// call sends a JSON request to the API and decodes a 200 answer into out.
func (m *metricsHub) call(t *testing.T, method, path, session string, body, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(t.Context(), method, m.api+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.Header.Set("Authorization", "Bearer "+session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}

// scrape reads the metrics endpoint and parses it as Prometheus does.
func (m *metricsHub) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(m.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d", resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return fams
}

// value returns the value of fam's series with the labels want (name,
// value pairs; a histogram's count), or -1 when there is none.
func value(fams map[string]*dto.MetricFamily, fam string, want ...string) float64 {
	f := fams[fam]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.Label {
				found = found || (l.GetName() == want[i] && l.GetValue() == want[i+1])
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

func TestAScrapeOfARealDaemonShowsWhatItDid(t *testing.T) {
	is := is.New(t)
	m := openMetricsHub(t)
	fams := m.scrape(t)
	for name, typ := range map[string]dto.MetricType{
		"wharf_live_streams":                       dto.MetricType_GAUGE,
		"wharf_live_subscriptions":                 dto.MetricType_GAUGE,
		"wharf_live_upstreams":                     dto.MetricType_GAUGE,
		"wharf_workspaces":                         dto.MetricType_GAUGE,
		"wharf_workspace_sessions":                 dto.MetricType_GAUGE,
		"wharf_workspace_session_starts_total":     dto.MetricType_COUNTER,
		"wharf_workspace_session_stops_total":      dto.MetricType_COUNTER,
		"wharf_workspace_session_crashes_total":    dto.MetricType_COUNTER,
		"wharf_workspaces_working":                 dto.MetricType_GAUGE,
		"wharf_workspaces_awaiting":                dto.MetricType_GAUGE,
		"wharf_agent_work_finished_total":          dto.MetricType_COUNTER,
		"wharf_journal_recoveries_total":           dto.MetricType_COUNTER,
		"wharf_journals_pending":                   dto.MetricType_GAUGE,
		"wharf_logins_total":                       dto.MetricType_COUNTER,
		"wharf_store_transaction_duration_seconds": dto.MetricType_HISTOGRAM,
		"wharf_credential_unlocks_total":           dto.MetricType_COUNTER,
		"wharf_credential_uses_total":              dto.MetricType_COUNTER,
		"wharf_clone_jobs_started_total":           dto.MetricType_COUNTER,
		"wharf_clone_jobs_finished_total":          dto.MetricType_COUNTER,
		"wharf_push_deliveries_total":              dto.MetricType_COUNTER,
		"go_goroutines":                            dto.MetricType_GAUGE,
		"process_resident_memory_bytes":            dto.MetricType_GAUGE,
	} {
		is.True(fams[name] != nil)          // the family is there from the start
		is.Equal(fams[name].GetType(), typ) // with its type
	}

	var login struct{ SessionID string }
	is.Equal(m.call(t, "POST", "/login", "", map[string]string{"name": "ann", "password": "wrong"}, nil), http.StatusUnauthorized) // a failure
	is.Equal(m.call(t, "POST", "/login", "", map[string]string{"name": "ann", "password": metricsUserPassword}, &login), http.StatusOK)
	is.Equal(m.call(t, "GET", "/api/hub/state", login.SessionID, nil, nil), http.StatusOK) // a state answer
	var act struct{ ID string }
	is.Equal(m.call(t, "POST", "/api/hub/workspaces", login.SessionID, map[string]any{"path": t.TempDir(), "init": true, "start": false}, &act), http.StatusOK)
	is.Equal(m.call(t, "POST", "/api/hub/sessions/"+act.ID+"/start", login.SessionID, nil, nil), http.StatusOK) // a start

	// A live stream, open until its session logs out.
	req, err := http.NewRequestWithContext(t.Context(), "GET", m.api+"/api/hub/live?ws="+act.ID+"&activity=1", nil)
	is.NoErr(err)
	req.Header.Set("Authorization", "Bearer "+login.SessionID)
	resp, err := http.DefaultClient.Do(req)
	is.NoErr(err)
	defer resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusOK) // the stream opens
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	is.NoErr(err)
	is.Equal(strings.TrimSpace(line), ": open") // and is open

	fams = m.scrape(t)
	is.Equal(fams["wharf_http_requests_total"].GetType(), dto.MetricType_COUNTER)                                                              // the requests, once there are some
	is.Equal(fams["wharf_http_request_duration_seconds"].GetType(), dto.MetricType_HISTOGRAM)                                                  // and their durations
	is.Equal(value(fams, "wharf_http_requests_total", "route", "/api/hub/state", "method", "GET", "code", "200"), 1.0)                         // the state answer, under its route
	is.Equal(value(fams, "wharf_http_request_duration_seconds", "route", "/api/hub/state", "method", "GET"), 1.0)                              // and timed
	is.Equal(value(fams, "wharf_http_requests_total", "route", "/api/hub/sessions/{workspaceId}/start", "method", "POST", "code", "200"), 1.0) // never by its path
	is.Equal(value(fams, "wharf_logins_total", "outcome", "failed"), 1.0)                                                                      // the wrong password
	is.Equal(value(fams, "wharf_logins_total", "outcome", "succeeded"), 1.0)                                                                   // the login
	is.Equal(value(fams, "wharf_workspaces"), 1.0)                                                                                             // one registered
	is.Equal(value(fams, "wharf_workspace_sessions"), 1.0)                                                                                     // running
	is.Equal(value(fams, "wharf_workspace_session_starts_total"), 1.0)                                                                         // started once
	is.Equal(value(fams, "wharf_live_streams"), 1.0)                                                                                           // the stream is counted
	is.Equal(value(fams, "wharf_live_subscriptions"), 1.0)                                                                                     // with its activity subscription
	is.True(value(fams, "wharf_store_transaction_duration_seconds", "kind", "update") >= 3)                                                    // the writes were timed
	is.True(value(fams, "wharf_store_transaction_duration_seconds", "kind", "view") >= 1)                                                      // and the reads
	for _, f := range fams["wharf_http_requests_total"].Metric {
		for _, l := range f.Label {
			is.True(!strings.Contains(l.GetValue(), act.ID)) // no label holds a workspace id
		}
	}

	is.Equal(m.call(t, "POST", "/logout", login.SessionID, nil, nil), http.StatusOK) // ends the session's streams
	fams = m.scrape(t)
	is.Equal(value(fams, "wharf_live_streams"), 0.0) // the stream is gone
}

func TestTheMetricsListenerAnswersTheProbes(t *testing.T) {
	is := is.New(t)
	m := openMetricsHub(t)
	for _, base := range []string{m.api, m.metrics} {
		for _, path := range []string{"/healthz", "/readyz"} {
			resp, err := http.Get(base + path)
			is.NoErr(err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			is.Equal(resp.StatusCode, http.StatusOK)               // alive and ready
			is.Equal(string(body), "ok\n")                         // says so and nothing more
			is.Equal(resp.Header.Get("Cache-Control"), "no-store") // never cached
		}
	}
	resp, err := http.Get(m.metrics + "/api/hub/state")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, http.StatusNotFound) // the metrics listener serves nothing of the API
}

func TestReadinessEndsWhenTheShutdownBegins(t *testing.T) {
	is := is.New(t)
	m := openMetricsHub(t)
	probe := func() int {
		resp, err := http.Get(m.metrics + "/readyz")
		is.NoErr(err)
		resp.Body.Close()
		return resp.StatusCode
	}
	is.Equal(probe(), http.StatusOK)                 // ready while serving
	m.stop()                                         // the shutdown begins
	is.NoErr(<-m.served)                             // the API is no longer served
	m.served <- nil                                  // (for the clean-up)
	is.Equal(probe(), http.StatusServiceUnavailable) // the metrics listener, still up, says it is not ready
}

func TestServeMetricsIsRefusedWithMetricsOff(t *testing.T) {
	is := is.New(t)
	d, err := daemon.Open(t.Context(), daemon.Config{StateDir: privateDir(t)})
	is.NoErr(err)
	defer d.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	is.NoErr(err)
	is.True(errors.Is(d.ServeMetrics(t.Context(), ln), daemon.ErrMetricsOff)) // nothing to serve
	is.Equal(d.MetricsHandler(), nil)                                         // no handler either
}
