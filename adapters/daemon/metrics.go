package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// The metrics listener: Prometheus's /metrics (adapters/metrics) and the
// probes (/healthz, /readyz, the same answers as the main listener's), on
// a listener of their own, so an operator can keep them off the network
// the Hub is reached from. It has no session and no other route: the
// metrics name no user, workspace or path, only counts.

// ErrMetricsOff is ServeMetrics' answer when Config.Metrics is off.
var ErrMetricsOff = errors.New("daemon: metrics are off (Config.Metrics)")

// MetricsHandler serves /metrics, /healthz and /readyz; nil when
// Config.Metrics is off. An embedder may mount it in its own mux.
func (d *Daemon) MetricsHandler() http.Handler {
	if d.metrics == nil {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", d.metrics.Handler())
	mux.Handle("/healthz", d.handler) // the API handler's own probes
	mux.Handle("/readyz", d.handler)
	return mux
}

// ServeMetrics serves MetricsHandler on ln, wrapped in TLS when
// Config.TLS is set (the Hub's certificate), until ctx ends or serving
// fails; it returns nil after a shutdown asked for by ctx. Whether ln's
// address may be reached from the network is the caller's choice: the
// wharf command refuses a non-loopback one without TLS.
func (d *Daemon) ServeMetrics(ctx context.Context, ln net.Listener) error {
	h := d.MetricsHandler()
	if h == nil {
		ln.Close()
		return ErrMetricsOff
	}
	if d.cfg.TLS != nil {
		ln = tls.NewListener(ln, d.cfg.TLS)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readHeaderTimeout,
		WriteTimeout:      time.Minute, // a scrape is bounded at 10 s; the answer is written well within this
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve metrics: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
	}
	<-served
	return nil
}
