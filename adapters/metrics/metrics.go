// Package metrics exposes a running Hub to Prometheus
// (github.com/prometheus/client_golang), on a private registry.
//
// Design. The core stays free of Prometheus: the Hub counts what happens
// with atomic adds and hands out one plain snapshot (service.Stats), and
// this package reads that snapshot at scrape time (hub.go), so a scrape
// costs the Hub one pass over its streams and nothing between scrapes.
// Two things cannot wait for a scrape, and are recorded as they happen:
// the requests, by route pattern, method and status (requests.go, an
// httpapi.RequestObserver the daemon passes to the handler), and the
// store's transactions (store.go, a hub.Store wrapper the daemon puts
// around the real one). Every label comes from a fixed set — the route
// table, a status code, an outcome — never from a request, a user or a
// workspace, so the number of series is bounded whatever clients send.
//
// The registry is private (never prometheus.DefaultRegisterer), with the
// Go runtime's and the process's collectors beside Wharf's own. The
// daemon (adapters/daemon) wires it; nothing else imports it.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// namespace prefixes every metric of Wharf's own.
const namespace = "wharf"

// Metrics is one Hub's registry and the recorders that feed it. Its
// methods are safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	requests *requests
	store    *storeMetrics
}

// New returns a registry holding the Go runtime's and the process's
// collectors and Wharf's request and store metrics; Observe adds the
// Hub's.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{reg: reg, requests: newRequests(), store: newStoreMetrics()}
	reg.MustRegister(m.requests.count, m.requests.took, m.store.took)
	return m
}

// Observe registers the collector of hub's snapshot: what a scrape
// reports of the live stream, the workspaces, logins, journals and the
// families. Call it once.
func (m *Metrics) Observe(hub Source) {
	m.reg.MustRegister(newHubCollector(hub))
}

// scrapeTimeout bounds one scrape, and scrapesInFlight how many are
// served at once: the endpoint answers whoever reaches its listener.
const (
	scrapeTimeout   = 10 * time.Second
	scrapesInFlight = 4
)

// Handler serves the registry in the Prometheus text format. A collector
// that fails leaves its metrics out and the rest is served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: scrapesInFlight,
		Timeout:             scrapeTimeout,
		Registry:            m.reg, // promhttp's own errors counted beside the rest
	})
}

// Registry returns the private registry, for tests and for an embedder
// that adds its own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
