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

func TestProcParsing(t *testing.T) {
	is := is.New(t)
	ppid, ticks, err := parseStat([]byte("42 (wharf (x) y) S 7 42 42 0 -1 4194560 100 0 0 0 12 30 5 3 20 0 9 0 100 0 0\n"))
	is.NoErr(err)              // a command with spaces and parentheses
	is.Equal(ppid, 7)          // the parent
	is.Equal(ticks, int64(50)) // user and system, its own and its children's
	rss, err := parseVmRSS([]byte("Name:\twharf\nVmPeak:\t  9 kB\nVmRSS:\t   13936 kB\nRssAnon:\t 1 kB\n"))
	is.NoErr(err)
	is.Equal(rss, int64(13936<<10)) // in bytes
	_, err = parseVmRSS([]byte("Name:\tzombie\n"))
	is.True(err != nil) // none
	peak, err := parseStatusBytes([]byte("Name:\twharf\nVmHWM:\t   20000 kB\nVmRSS:\t   13936 kB\n"), "VmHWM")
	is.NoErr(err)
	is.Equal(peak, int64(20000<<10)) // any field given in kB
}

func TestWithChunk(t *testing.T) {
	is := is.New(t)
	tmpl := []byte(`{"event":{"data":{"type":"item.text_delta","delta":"[p 3 100]"}}}`)
	is.Equal(string(withChunk(tmpl, "[p 12 2000]")), `{"event":{"data":{"type":"item.text_delta","delta":"[p 12 2000]"}}}`)
	is.Equal(thousands(1000), "1,000")
	is.Equal(thousands(1234567), "1,234,567")
	is.Equal(thousands(999), "999")
}
