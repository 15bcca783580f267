package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wharfhub/wharf/hub"
)

// storeBuckets are the store transactions' buckets, in seconds: a read of
// a tenth of a millisecond to a write waiting for a stuck disk.
var storeBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5}

type storeMetrics struct {
	took         *prometheus.HistogramVec
	view, update prometheus.Observer
}

func newStoreMetrics() *storeMetrics {
	took := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: "store", Name: "transaction_duration_seconds",
		Help:    "Store transactions' durations, closure and commit included, by kind (view, update).",
		Buckets: storeBuckets}, []string{"kind"})
	return &storeMetrics{took: took, view: took.WithLabelValues("view"), update: took.WithLabelValues("update")}
}

// Store returns s timing every transaction into the registry; every
// other method is s's own.
func (m *Metrics) Store(s hub.Store) hub.Store { return timedStore{Store: s, m: m.store} }

// timedStore is a hub.Store that times its transactions.
type timedStore struct {
	hub.Store
	m *storeMetrics
}

func (s timedStore) View(ctx context.Context, fn func(hub.Tx) error) error {
	start := time.Now()
	err := s.Store.View(ctx, fn)
	s.m.view.Observe(time.Since(start).Seconds())
	return err
}

func (s timedStore) Update(ctx context.Context, fn func(hub.Tx) error) error {
	start := time.Now()
	err := s.Store.Update(ctx, fn)
	s.m.update.Observe(time.Since(start).Seconds())
	return err
}
