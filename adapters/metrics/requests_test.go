package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wharfhub/wharf/adapters/metrics"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

func TestARouteShowsNoSeriesBeforeItsFirstRequest(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	record := m.Route("GET", "/api/hub/state")
	n, err := testutil.GatherAndCount(m.Registry(), "wharf_http_requests_total", "wharf_http_request_duration_seconds")
	is.NoErr(err)  // gathered
	is.Equal(n, 0) // a route no one asked shows nothing
	record(200, time.Millisecond)
	record(200, time.Millisecond)
	record(418, time.Millisecond)
	record(0, time.Millisecond)
	n, err = testutil.GatherAndCount(m.Registry(), "wharf_http_requests_total")
	is.NoErr(err)  // gathered
	is.Equal(n, 3) // 200, 418 and the status net/http never writes, each once
}

func TestRecordingARequestOfACommonStatusAllocatesNothing(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	record := m.Route("GET", "/api/hub/state")
	record(200, time.Millisecond) // the series are made here
	allocs := testing.AllocsPerRun(1000, func() { record(200, time.Millisecond) })
	is.Equal(allocs, 0.0) // the hot path allocates nothing
}

func TestTheStoreWrapperTimesBothKindsAndPassesErrorsThrough(t *testing.T) {
	is := is.New(t)
	m := metrics.New()
	s := m.Store(fakes.NewStore())
	refused := errors.New("refused")
	is.Equal(s.Update(context.Background(), func(hub.Tx) error { return refused }), refused) // fn's error unchanged
	is.NoErr(s.View(context.Background(), func(hub.Tx) error { return nil }))                // a view
	fams, err := m.Registry().Gather()
	is.NoErr(err) // gathered
	timed := map[string]uint64{}
	for _, f := range fams {
		if f.GetName() == "wharf_store_transaction_duration_seconds" {
			for _, s := range f.Metric {
				timed[s.Label[0].GetValue()] = s.Histogram.GetSampleCount()
			}
		}
	}
	is.Equal(timed, map[string]uint64{"view": 1, "update": 1}) // each transaction timed once, under its kind
}

// BenchmarkRecord is what the metrics add to each request: one call of a
// route's recorder (a counter's add and a histogram's observe).
func BenchmarkRecord(b *testing.B) {
	record := metrics.New().Route("GET", "/api/hub/state")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			record(200, 300*time.Microsecond)
		}
	})
}
