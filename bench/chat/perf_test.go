package main

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestPercentile(t *testing.T) {
	is := is.New(t)
	xs := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	is.Equal(percentile(xs, 50), time.Duration(5))   // nearest rank
	is.Equal(percentile(xs, 99), time.Duration(10))  // the top one
	is.Equal(percentile(xs, 100), time.Duration(10)) // the max
	is.Equal(percentile(nil, 99), time.Duration(0))  // none
}

func TestWithChunk(t *testing.T) {
	is := is.New(t)
	tmpl := []byte(`{"event":{"data":{"type":"item.text_delta","delta":"[p 3 100]"}}}`)
	is.Equal(string(withChunk(tmpl, "[p 12 2000]")), `{"event":{"data":{"type":"item.text_delta","delta":"[p 12 2000]"}}}`)
	is.Equal(thousands(1000), "1,000")
	is.Equal(thousands(1234567), "1,234,567")
	is.Equal(thousands(999), "999")
}
