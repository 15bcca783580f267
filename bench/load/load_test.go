package main

import (
	"bufio"
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestPercentileSummaryMedian(t *testing.T) {
	is := is.New(t)
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	for p, want := range map[float64]time.Duration{50: 50, 99: 99, 99.9: 100, 0.001: 1} {
		is.Equal(percentile(hundred, p), want) // nearest rank
	}
	is.Equal(percentile(nil, 99), time.Duration(0))                                                    // none
	is.Equal(summarize([]time.Duration{5, 1, 4, 2, 3}), summary{N: 5, P50: 3, P90: 5, P99: 5, Max: 5}) // sorted first
	is.Equal([]float64{median([]float64{3, 1, 2}), median([]float64{4, 1, 3, 2})}, []float64{2, 2.5})  // odd and even counts
	is.True(math.IsNaN(median(nil)) && math.IsNaN(ratio(1, 0)))                                        // no value, no ratio
}

func TestParseWrk(t *testing.T) {
	is := is.New(t)
	var r run
	is.NoErr(parseWrk("  14577 requests in 1.10s, 4.23MB read\nbench-run 14577 1100000 6 7 70 2500 9000\n", &r)) // wrk.lua's line among wrk's
	is.Equal([]int{r.OK, r.Non200, r.Errors}, []int{14570, 7, 6})                                                // answers, statuses ≥ 400, socket errors
	is.Equal([]time.Duration{r.Lat.P50, r.Lat.P99, r.Lat.Max}, []time.Duration{70e3, 2500e3, 9000e3})            // microseconds
	is.Equal(int(r.RPS()), 13251)                                                                                // over wrk's measured duration
	r = run{}
	is.NoErr(parseWrk("bench-run 5 1000000 0 2 1 2 3\nbench-thread 3 3 1 1 200:2 429:1\nbench-thread 2 2 -1 0 404:2\n", &r))
	is.Equal(r.Threads[0], wrkThread{Sent: 3, Answered: 3, LastOK: 1, NoStore: 1, Status: map[int]int{200: 2, 429: 1}}) // a thread's counts
	is.Equal([]int{r.OK, r.Non200}, []int{2, 3})                                                                        // counted statuses are exact
	is.True(parseWrk("nothing", &run{}) != nil)                                                                         // no figures, no run
}

func TestLiveParsing(t *testing.T) {
	is := is.New(t)
	env := string(envelopeBytes("w", "activity", 17, "data", activityData(true)))
	c := &liveConn{br: bufio.NewReaderSize(strings.NewReader(": open\n\nevent: hello\ndata: {}\n\n\nevent: live\ndata: "+env+"\n\n: keepalive\n\n"), 16)}
	var frames []frame
	for f, err := c.next(); err == nil; f, err = c.next() { // lines longer than the buffer
		frames = append(frames, frame{comment: bytes.Clone(f.comment), event: bytes.Clone(f.event), data: bytes.Clone(f.data)})
	}
	is.Equal(len(frames), 4)                                                                                // comments and events, the extra blank line skipped
	is.Equal([]string{string(frames[0].comment), string(frames[3].comment)}, []string{"open", "keepalive"}) // comments
	e, ok := parseEnvelope(frames[2])
	is.True(ok)                                                                                          // the probe's envelope parses
	is.Equal([]string{string(e.ws), string(e.topic), string(e.kind)}, []string{"w", "activity", "data"}) //
	is.Equal(e.seq, int64(17))                                                                           // the cursor's number
	is.Equal(string(e.data), string(activityData(true)))                                                 // the payload, verbatim
	_, ok = parseEnvelope(frame{data: []byte(`{"ws":"a","topic":"t","cursor":"c"}`)})
	is.True(!ok)                                                   // no event
	is.Equal(jsonInt(inventoryTick(42, 3), "benchSeq"), int64(42)) // a tick's number
}

func TestReadFrameHeadKeepsTheHeadOfALongFrame(t *testing.T) {
	is := is.New(t)
	data := `{"ws":"a","cursor":"b.7","event":{"kind":"data","data":"` + strings.Repeat("x", 10000) + `"}}`
	br := bufio.NewReaderSize(strings.NewReader(": open\n\nevent: live\ndata: "+data+"\n\nevent: live\ndata: {\"cut\"\n\n"), 4096)
	f, err := readFrameHead(br)
	is.NoErr(err)
	is.True(f.comment) // a comment frame
	f, err = readFrameHead(br)
	is.NoErr(err)
	is.Equal(f.n, len(data))                              // the whole line counted, across the reader's buffer
	is.Equal(len(f.head), 512)                            // its head kept
	is.Equal(string(jsonString(f.head, "cursor")), "b.7") // enough to read the envelope's cursor
	is.True(f.closed && !f.comment)                       // and its end seen
	f, err = readFrameHead(br)
	is.NoErr(err)
	is.True(!f.closed) // a frame that does not end an envelope
}

func TestAFigureWithoutABoundReadsReported(t *testing.T) {
	is := is.New(t)
	for _, c := range []struct {
		v    verdict
		want string
	}{
		{verdict{Target: "≤ 1 s", OK: true}, "PASS"},
		{verdict{Target: "≤ 1 s"}, "**FAIL**"},
		{verdict{Target: reported, OK: true}, "reported"},
	} {
		is.Equal(c.v.word(), c.want) // the Verdict column
	}
}

func TestW16SpreadsTheDevicesEvenlyOverTheWorkspaces(t *testing.T) {
	is := is.New(t)
	devices, firstCover := make([]int, w16Workspaces), map[int]bool{}
	for i := range w16Devices {
		covers := w16Covers(i)
		is.Equal(len(covers), w16Cover) // each device covers w16Cover workspaces
		seen := map[int]bool{}
		for _, ws := range covers {
			is.True(ws >= 0 && ws < w16Workspaces && !seen[ws]) // distinct workspaces that exist
			seen[ws] = true
			devices[ws]++
			if i < w16Workspaces/w16Cover {
				firstCover[ws] = true
			}
		}
	}
	for ws, n := range devices {
		is.Equal(n, w16Devices*w16Cover/w16Workspaces) // every workspace covered by as many devices
		is.True(firstCover[ws])                        // and by one of the first devices, enrolled one at a time
	}
	is.Equal(msNever(w16Never), "never (not within 30s of the last event)") // a message that never came
}
