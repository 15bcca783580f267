package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// summary condenses one run's latencies.
type summary struct {
	N                        int
	P50, P90, P99, P999, Max time.Duration
}

// percentile is the p-th percentile (0 < p <= 100) of sorted by nearest
// rank: the smallest value with at least p % of the values at or below
// it; 0 for none.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(max(int(math.Ceil(p/100*float64(len(sorted)))), 1), len(sorted))-1]
}

// summarize sorts lat in place and returns its percentiles.
func summarize(lat []time.Duration) summary {
	slices.Sort(lat)
	s := summary{N: len(lat)}
	if len(lat) > 0 {
		s.P50, s.P90, s.P99, s.P999, s.Max = percentile(lat, 50), percentile(lat, 90), percentile(lat, 99), percentile(lat, 99.9), lat[len(lat)-1]
	}
	return s
}

// median is the median of xs (the mean of the middle two for an even
// count), NaN for none; xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// ratio is a/b, NaN when b is zero.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// ms formats a latency; "—" for none.
func ms(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.3f ms", d.Seconds()*1e3)
}

// secs formats a duration; "never" for a negative one.
func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// pct formats a share; "—" for NaN (unknown).
func pct(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*x)
}

func us(d time.Duration) string { return fmt.Sprintf("%.1f µs", d.Seconds()*1e6) }
func kb(x float64) string       { return fmt.Sprintf("%.1f KB", x/1024) }
func mib(x uint64) string       { return fmt.Sprintf("%.1f MiB", float64(x)/(1<<20)) }
func rps(x float64) string      { return fmt.Sprintf("%.0f", x) }
func passFail(ok bool) string   { return map[bool]string{true: "PASS", false: "**FAIL**"}[ok] }

// errNote appends why something stopped early, when it did.
func errNote(err string) string {
	return map[bool]string{true: "; " + err}[err != "" && err != "<nil>"]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// vd is a verdict with a formatted figure.
func vd(name, target string, ok bool, format string, a ...any) verdict {
	return verdict{Name: name, Figure: fmt.Sprintf(format, a...), Target: target, OK: ok}
}
