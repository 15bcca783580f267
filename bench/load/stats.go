package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest value such that at least p % of the
// values are at or below it. It returns 0 for an empty slice.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// summary condenses one run's latencies.
type summary struct {
	N                        int
	P50, P90, P99, P999, Max time.Duration
}

// summarize sorts lat in place and returns its percentiles.
func summarize(lat []time.Duration) summary {
	slices.Sort(lat)
	s := summary{N: len(lat)}
	if len(lat) == 0 {
		return s
	}
	s.P50 = percentile(lat, 50)
	s.P90 = percentile(lat, 90)
	s.P99 = percentile(lat, 99)
	s.P999 = percentile(lat, 99.9)
	s.Max = lat[len(lat)-1]
	return s
}

// ratio returns a/b, or NaN when b is zero.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// ms formats a duration in milliseconds with three decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

// passFail renders a verdict.
func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "**FAIL**"
}

// median returns the median of xs (the mean of the middle two for an even
// count), or NaN for none. xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
