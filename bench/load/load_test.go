package main

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
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
	for _, c := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{{nil, 99, 0}, {[]time.Duration{7}, 99, 7}, {hundred, 50, 50}, {hundred, 99, 99}, {hundred, 99.9, 100}, {hundred, 0.001, 1},
		{[]time.Duration{1, 2}, 50, 1}, {[]time.Duration{1, 2}, 51, 2}} {
		is.Equal(percentile(c.in, c.p), c.want) // nearest rank
	}
	lat := []time.Duration{5, 1, 4, 2, 3}
	is.Equal(summarize(lat), summary{N: 5, P50: 3, P90: 5, P99: 5, P999: 5, Max: 5}) // the percentiles of 1..5
	is.Equal(lat[0], time.Duration(1))                                               // sorted in place
	is.Equal(median([]float64{3, 1, 2}), 2.0)                                        // odd count: the middle one
	is.Equal(median([]float64{4, 1, 3, 2}), 2.5)                                     // even count: the mean of the middle two
	is.True(math.IsNaN(median(nil)) && math.IsNaN(ratio(1, 0)))                      // no value, no ratio
}

func TestRoundsKeepUndisturbed(t *testing.T) {
	is := is.New(t)
	row := func(others float64) []run { return []run{{Others: 0}, {Others: others}, {Others: math.NaN()}} }
	rs := &rounds{conns: []int{1}, runs: [][][]run{{row(0.5), row(0.01), row(0.2)}}, mo: 0.1}
	is.Equal(len(rs.clean(0)), 1)                                                   // only the undisturbed round
	is.Equal(rs.clean(0)[0][1].Others, 0.01)                                        // the 1 % one
	is.Equal(disturbance(row(math.NaN())), 0.0)                                     // unknown shares do not disturb
	rs.runs[0] = rs.runs[0][:1]                                                     // all disturbed:
	is.Equal(len(rs.clean(0)), 1)                                                   // then every round counts
	is.True(strings.HasSuffix(rs.list(0, func([]run) string { return "x" }), "x*")) // and is starred
}

func TestRequestsAndAnswers(t *testing.T) {
	is := is.New(t)
	tg := target{srv: &server{addr: "127.0.0.1:1"}, path: "/s", hdr: http.Header{"Authorization": {"Bearer s"}},
		post: func(w, n int) (string, []byte) { return "/p", []byte(`{"n":` + string(rune('0'+n)) + `}`) }}
	reqs := tg.requests(2)
	is.Equal(len(reqs[1]), 2) // two POSTs per worker, sent in turn
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(string(reqs[1][1]))))
	is.NoErr(err)                                         // a well-formed request
	body, _ := io.ReadAll(req.Body)                       //
	is.Equal(string(body), `{"n":1}`)                     // its body
	is.Equal(req.Header.Get("Authorization"), "Bearer s") // and headers
	tg.post = nil
	req, err = http.ReadRequest(bufio.NewReader(strings.NewReader(string(tg.requests(1)[0][0]))))
	is.NoErr(err)                         // a GET
	is.Equal(req.ContentLength, int64(0)) // without a body
	br := bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
	for _, want := range []int{200, 404} {
		status, err := readAnswer(br)
		is.NoErr(err)          // answers with a length are read
		is.Equal(status, want) // one after the other
	}
	_, err = readAnswer(br)
	is.True(err != nil) // a chunked answer is refused
}

func TestParseWrk(t *testing.T) {
	is := is.New(t)
	var r run
	is.NoErr(parseWrk(`Running 1s test @ http://127.0.0.1:1/
  Latency Distribution
     50%   70.00us
     90%  123.00us
     99%    2.50ms
  14577 requests in 1.10s, 4.23MB read
  Socket errors: connect 1, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  13256.81
`, &r)) // the report parses
	is.Equal(r.OK+r.Non200, 14577) // every answer
	is.Equal(r.Non200, 7)          // the non-2xx
	is.Equal(r.Errors, 6)          // the socket errors
	is.Equal([]time.Duration{r.Lat.P50, r.Lat.P90, r.Lat.P99}, []time.Duration{70 * time.Microsecond, 123 * time.Microsecond, 2500 * time.Microsecond})
	is.Equal(int(r.RPS()), 13256)           // the window follows wrk's rate
	is.True(parseWrk("nothing", &r) != nil) // no report, no run
}

func TestHostParsing(t *testing.T) {
	is := is.New(t)
	st, err := parseProcStat("7 (a) b (c)) Z 3 7 7")
	is.NoErr(err)                                                         // a name with spaces and parentheses
	is.Equal(st, procStat{PID: 7, PPID: 3, Comm: "a) b (c)", State: 'Z'}) // fields after the last ')'
	_, err = parseProcStat("7 R 3")
	is.True(err != nil)                                                    // no name
	is.Equal(parseVmRSS("Name:\tx\nVmRSS:\t  2048 kB\n"), int64(2048<<10)) // kB to bytes
	is.Equal(parseVmRSS("VmRSS:\t2 MB\n"), int64(-1))                      // an unknown unit
}

func TestLiveParsing(t *testing.T) {
	is := is.New(t)
	data := activityData(true)
	in := ": open\n\nevent: hello\ndata: {\"streamId\":\"abc\"}\n\n\nevent: live\ndata: " + string(envelopeBytes("w", "activity", 17, "data", data)) +
		"\n\nevent: live\ndata: " + strings.Repeat("x", 40) + "\n\n: keepalive\n\n"
	c := &liveConn{br: bufio.NewReaderSize(strings.NewReader(in), 16)} // lines longer than the buffer
	var frames []frame
	for f, err := c.next(); err == nil; f, err = c.next() {
		frames = append(frames, frame{comment: append([]byte(nil), f.comment...), event: append([]byte(nil), f.event...), data: append([]byte(nil), f.data...)})
	}
	is.Equal(len(frames), 5)                         // comments and events, the blank line skipped
	is.Equal(string(frames[0].comment), "open")      // a comment
	is.Equal(string(frames[4].comment), "keepalive") //
	is.Equal(len(frames[3].data), 40)                // a long line assembled
	e, ok := parseEnvelope(frames[2])
	is.True(ok)                                                                                                                    // the probe's envelope parses
	is.Equal([]string{string(e.ws), string(e.topic), string(e.kind), string(e.epoch)}, []string{"w", "activity", "data", "probe"}) //
	is.Equal(e.seq, int64(17))                                                                                                     // the cursor's number
	is.Equal(string(e.data), string(data))                                                                                         // the payload, verbatim
	var v map[string]any
	is.NoErr(json.Unmarshal(frames[2].data, &v)) // and is JSON
	_, ok = parseEnvelope(frame{data: []byte(`{"ws":"a","topic":"t","cursor":"c"}`)})
	is.True(!ok)                                                   // no event
	is.Equal(jsonInt(inventoryTick(42, 3), "benchSeq"), int64(42)) // a tick's number
	is.Equal(countServers([]byte("goroutine 1 [running]:\nmain.main()\n\ngoroutine 7 [IO wait]:\nnet/http.(*conn).serve(0x2)\n\n"+
		"goroutine 8 [chan receive]:\nmain.x()\ncreated by net/http.(*Server).Serve in goroutine 6\n")), 1) // servers' frames, not "created by"
}

func TestParseFlags(t *testing.T) {
	is := is.New(t)
	c, err := parseFlags(nil, io.Discard)
	is.NoErr(err)                           // the defaults parse
	is.Equal(c.conns, []int{1, 32, 128})    // W1's concurrencies
	is.True(c.has("state1") && c.has("d1")) // every workload by default
	for _, args := range [][]string{{"-conns", "0"}, {"-workloads", "w8"}, {"-rounds", "0"}, {"-live-window", "0s"}, {"extra"}} {
		_, err := parseFlags(args, io.Discard)
		is.True(err != nil) // out-of-range values are refused
	}
	is.True(w9Name(0, 0) != w9Name(0, 1) && w9Name(0, 0) == w9Name(0, 2) && w9Name(0, 0) != w9Name(1, 0)) // W9: two names in turn, per client
}
