package metrics

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The request metrics. The handler asks Route once per route of its table
// (httpapi.RequestObserver) and calls the function it gets for each
// request it answers. A route's series are made on its first request
// with a given status, not before (a hundred routes would otherwise show
// thousands of zeros), and kept: a request of a status seen before costs
// two atomic loads, the counter's add and the histogram's observe, with
// no lookup by label and no allocation.

// requestBuckets are the request durations' buckets, in seconds: from a
// state answer's fraction of a millisecond to a long stream's life.
var requestBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

type requests struct {
	count *prometheus.CounterVec   // route, method, code
	took  *prometheus.HistogramVec // route, method
}

func newRequests() *requests {
	return &requests{
		count: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code."}, []string{"route", "method", "code"}),
		took: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer (a stream's whole life), by route pattern and method.",
			Buckets: requestBuckets}, []string{"route", "method"}),
	}
}

// commonCodes are the statuses a route keeps a slot for; others are
// counted through the vector's lookup (the rare path).
var commonCodes = [...]int{200, 201, 204, 206, 301, 302, 304, 400, 401, 403, 404, 405, 409, 410, 413, 421, 429, 431, 500, 502, 503, 504}

// slotOf maps a status to its slot in route.codes, or -1.
var slotOf = func() (t [600]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range commonCodes {
		t[c] = int8(i)
	}
	return t
}()

// codeText is each status's label value, made once.
var codeText = func() (t [600]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// route is one route's series, made on first use.
type route struct {
	r               *requests
	pattern, method string
	codes           [len(commonCodes)]atomic.Pointer[counter]
	took            atomic.Pointer[observer]
}

type (
	counter  struct{ prometheus.Counter }
	observer struct{ prometheus.Observer }
)

// Route returns the recorder of one route's requests
// (httpapi.RequestObserver).
func (r *requests) Route(method, pattern string) func(status int, took time.Duration) {
	rt := &route{r: r, pattern: pattern, method: method}
	return rt.record
}

// Route returns the recorder of one route's requests: m implements
// httpapi.RequestObserver.
func (m *Metrics) Route(method, pattern string) func(status int, took time.Duration) {
	return m.requests.Route(method, pattern)
}

func (rt *route) record(status int, took time.Duration) {
	rt.counterOf(status).Inc()
	o := rt.took.Load()
	if o == nil {
		o = &observer{rt.r.took.WithLabelValues(rt.pattern, rt.method)}
		rt.took.Store(o) // two first requests may both look it up: the same child
	}
	o.Observe(took.Seconds())
}

func (rt *route) counterOf(status int) prometheus.Counter {
	if status < 100 || status >= len(slotOf) {
		status = 0 // never written by net/http; kept as "0" rather than dropped
	}
	slot := slotOf[status]
	if slot < 0 {
		return rt.r.count.WithLabelValues(rt.pattern, rt.method, codeText[status])
	}
	c := rt.codes[slot].Load()
	if c == nil {
		c = &counter{rt.r.count.WithLabelValues(rt.pattern, rt.method, codeText[status])}
		rt.codes[slot].Store(c)
	}
	return c
}
