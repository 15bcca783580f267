package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// Diagnostics outside the contract: the probes an orchestrator, a load
// balancer or a service manager asks (GET /healthz, GET /readyz), and the
// hook an operator's request metrics hang on (RequestObserver). The probes
// need no session and say nothing but their status: anyone who can reach
// the Hub may ask them, so they carry no detail, and they are answered
// whatever host the request names (a container's health check names the
// service's own, which no page can use: the answer holds nothing to read).

// HealthService answers readiness (health.go).
type HealthService interface {
	// Ready returns nil when the Hub should be sent traffic.
	Ready(ctx context.Context) error
}

// The probes' paths, served before the Host check.
const (
	healthPath = "/healthz"
	readyPath  = "/readyz"
)

var (
	headerTextPlain = []string{"text/plain; charset=utf-8"}
	bodyOK          = []byte("ok\n")
	bodyNotReady    = []byte("not ready\n")
)

// handleHealth answers 200 while the process serves HTTP at all.
func (a *api) handleHealth(w http.ResponseWriter, _ *http.Request, _ caller) error {
	writeProbe(w, http.StatusOK, bodyOK)
	return nil
}

// handleReady answers 200 when the Hub is ready for traffic, 503
// otherwise; why it is not goes to the debug log only (a probe asks
// every few seconds).
func (a *api) handleReady(w http.ResponseWriter, r *http.Request, _ caller) error {
	if err := a.health.Ready(r.Context()); err != nil {
		a.log.LogAttrs(r.Context(), slog.LevelDebug, "not ready", slog.Any("err", err))
		writeProbe(w, http.StatusServiceUnavailable, bodyNotReady)
		return nil
	}
	writeProbe(w, http.StatusOK, bodyOK)
	return nil
}

func writeProbe(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = headerTextPlain
	h["Cache-Control"] = headerNoStore
	w.WriteHeader(status)
	w.Write(body)
}

// RequestObserver learns how each request was answered: an operator's
// request metrics (adapters/metrics implements it). NewHandler asks it
// once for the recorder of each route, so counting a request costs no
// lookup by name and no allocation; its labels are the route table's,
// never a request's path, so they are bounded.
type RequestObserver interface {
	// Route returns the recorder of the requests one route answers, by
	// method and ServeMux pattern: a route of the table with its method
	// (a forwarding route of every method gets one recorder per common
	// method and one with method "other"); a documented path asked with
	// a method it does not have (405) gets method "other". Requests no
	// route took are recorded under patterns in brackets: "[pages]" (the
	// dashboard), "[misdirected]" (421, a foreign Host) and "[unmatched]"
	// (404, a path no route has), with method "other".
	Route(method, pattern string) RequestRecorder
}

// RequestRecorder records one answered request: its status and the time
// from its arrival to the end of its answer (for a stream, its life).
// It is called once per request, concurrently. (An alias of a plain func
// type, so an adapter implements RequestObserver without importing this
// package.)
type RequestRecorder = func(status int, took time.Duration)

// Pseudo-patterns of the requests no route took, and the method label of
// a method no route has.
const (
	patternPages       = "[pages]"
	patternMisdirected = "[misdirected]"
	patternUnmatched   = "[unmatched]"
	methodOther        = "other"
)

// forwardedMethods are the methods a forwarding route (of every method)
// records by name; any other is methodOther.
var forwardedMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// recorders are the recorders of one pattern, by method, resolved once.
type recorders struct {
	by    map[string]RequestRecorder
	other RequestRecorder
}

func (rs *recorders) of(method string) RequestRecorder {
	if r, ok := rs.by[method]; ok {
		return r
	}
	return rs.other
}

// newRecorders resolves the recorders of pattern's methods; nil without
// an observer.
func newRecorders(o RequestObserver, pattern string, methods map[string]route) *recorders {
	if o == nil {
		return nil
	}
	rs := &recorders{by: map[string]RequestRecorder{}, other: o.Route(methodOther, pattern)}
	for m := range methods {
		if m == anyMethod {
			for _, fm := range forwardedMethods {
				rs.by[fm] = o.Route(fm, pattern)
			}
			continue
		}
		rs.by[m] = o.Route(m, pattern)
	}
	return rs
}

// record tells the recorder sw was given how the request ended.
func (sw *statusWriter) record(start time.Time) {
	if sw.rec == nil {
		return
	}
	status := sw.status
	if status == 0 {
		status = http.StatusOK // nothing written: net/http answers 200
	}
	sw.rec(status, time.Since(start))
}
