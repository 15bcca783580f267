package main

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 99, 0},
		{"one value", []time.Duration{7}, 50, 7},
		{"one value p99", []time.Duration{7}, 99, 7},
		{"p50 of 1..100", hundred, 50, 50},
		{"p90 of 1..100", hundred, 90, 90},
		{"p99 of 1..100", hundred, 99, 99},
		{"p99.9 of 1..100 rounds up", hundred, 99.9, 100},
		{"p100 is the max", hundred, 100, 100},
		{"tiny p is the min", hundred, 0.001, 1},
		{"p50 of two is the lower", []time.Duration{1, 2}, 50, 1},
		{"p51 of two is the upper", []time.Duration{1, 2}, 51, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.in, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarizeSortsAndReports(t *testing.T) {
	lat := []time.Duration{5, 1, 4, 2, 3}
	s := summarize(lat)
	if s.N != 5 || s.P50 != 3 || s.P99 != 5 || s.Max != 5 {
		t.Errorf("summarize = %+v", s)
	}
	if lat[0] != 1 || lat[4] != 5 {
		t.Errorf("summarize did not sort in place: %v", lat)
	}
	if z := summarize(nil); z != (summary{}) {
		t.Errorf("summarize(nil) = %+v, want zero", z)
	}
}

func TestP99Limit(t *testing.T) {
	if got := p99Limit(2 * time.Millisecond); got != 5*time.Millisecond {
		t.Errorf("p99Limit(2ms) = %v, want 5ms", got)
	}
}

func TestRatio(t *testing.T) {
	if got := ratio(1, 4); got != 0.25 {
		t.Errorf("ratio(1, 4) = %v", got)
	}
	if got := ratio(1, 0); !math.IsNaN(got) {
		t.Errorf("ratio(1, 0) = %v, want NaN", got)
	}
}

func TestParseFlagsDefaultsAndBounds(t *testing.T) {
	c, err := parseFlags(nil, discard{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.conns) != 3 || c.conns[0] != 1 || c.conns[1] != 10 || c.conns[2] != 50 {
		t.Errorf("default conns = %v", c.conns)
	}
	for _, args := range [][]string{
		{"-conns", "0"},
		{"-conns", "1,x"},
		{"-duration", "1ns"},
		{"-attack-attempts", "0"},
		{"extra"},
	} {
		if _, err := parseFlags(args, discard{}); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestMedian(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median(3,1,2) = %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %v", got)
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
	in := []float64{2, 1}
	median(in)
	if in[0] != 2 {
		t.Error("median modified its input")
	}
}

func TestCleanKeepsUndisturbedRounds(t *testing.T) {
	round := func(others float64) pairRow {
		return pairRow{Probe: runResult{Others: 0}, W1: runResult{Others: others}, W2: runResult{Others: math.NaN()}}
	}
	c := concRow{Conns: 10, Rounds: []pairRow{round(0.5), round(0.01), round(0.2)}}
	if got := c.clean(0.1); len(got.Rounds) != 1 || got.Rounds[0].W1.Others != 0.01 {
		t.Errorf("clean kept %+v, want only the 0.01 round", got.Rounds)
	}
	all := concRow{Conns: 10, Rounds: []pairRow{round(0.5), round(0.3)}}
	if got := all.clean(0.1); len(got.Rounds) != 2 {
		t.Errorf("clean of all-disturbed rounds kept %d, want all 2", len(got.Rounds))
	}
	if d := round(math.NaN()).disturbance(); d != 0 {
		t.Errorf("disturbance with unknown shares = %v, want 0", d)
	}
}
