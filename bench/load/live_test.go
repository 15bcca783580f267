package main

import (
	"bufio"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestSSEReaderFrames(t *testing.T) {
	is := is.New(t)
	long := strings.Repeat("x", 100)
	in := ": open\n\nevent: hello\ndata: {\"streamId\":\"abc\"}\n\n\nevent: live\ndata: " + long + "\n\n: keepalive\n\n"
	r := &sseReader{br: bufio.NewReaderSize(strings.NewReader(in), 16)} // lines longer than the buffer
	f, err := r.next()
	is.NoErr(err)
	is.Equal(string(f.Comment), "open") // a comment frame
	f, err = r.next()
	is.NoErr(err)
	is.Equal(string(f.Event), "hello")             // an event
	is.Equal(string(f.Data), `{"streamId":"abc"}`) // with its data
	is.Equal(f.Comment, nil)                       // and no comment
	f, err = r.next()                              // an extra blank line is skipped
	is.NoErr(err)                                  //
	is.Equal(string(f.Data), long)                 // a line longer than the buffer is assembled
	f, err = r.next()                              //
	is.NoErr(err)                                  //
	is.Equal(string(f.Comment), "keepalive")       // the keepalive comment
	_, err = r.next()                              //
	is.True(err != nil)                            // the end of the stream is an error
}

func TestParseEnvelopeRoundTrip(t *testing.T) {
	is := is.New(t)
	data := activityData(true)
	b := envelopeBytes("ws-1", "activity", "k3j4.17", "data", data)
	var v map[string]any
	is.NoErr(json.Unmarshal(b, &v)) // the probe's envelope is JSON
	e, ok := parseEnvelope(b)
	is.True(ok)                    // and parses
	is.Equal(string(e.WS), "ws-1") // ws
	is.Equal(string(e.Topic), "activity")
	is.Equal(string(e.Cursor), "k3j4.17")
	is.Equal(string(e.Epoch), "k3j4") // the cursor's epoch
	is.Equal(e.Seq, int64(17))        // and number
	is.Equal(string(e.Kind), "data")
	is.Equal(string(e.Data), string(data)) // the payload, verbatim

	e, ok = parseEnvelope([]byte(`{"ws":"a","topic":"document","key":"","cursor":"x","event":{"kind":"ready"}}`))
	is.True(ok)                // a keyed signal parses
	is.Equal(e.Data, nil)      // without data
	is.Equal(e.Seq, int64(-1)) // a cursor without a number
	is.Equal(string(e.Kind), "ready")

	for _, bad := range []string{`{}`, `{"ws":"a","topic":"t","cursor":"c"}`, `{"ws":"a","topic":"t","cursor":"c","event":{"kind":"data","data":1`} {
		_, ok := parseEnvelope([]byte(bad))
		is.True(!ok) // anything else is refused
	}
}

func TestJSONMembers(t *testing.T) {
	is := is.New(t)
	tick := inventoryTick(42, 10)
	var v struct {
		Type     string
		BenchSeq int64
		Pad      string
	}
	is.NoErr(json.Unmarshal(tick, &v)) // a padded tick is JSON
	is.Equal(v.BenchSeq, int64(42))
	is.Equal(len(v.Pad), 10)
	is.Equal(jsonInt(tick, "benchSeq"), int64(42)) // read without decoding
	is.Equal(jsonInt(tick, "missing"), int64(-1))  // an absent member
	is.Equal(string(jsonString(tick, "type")), "conversation.inventory")
	is.Equal(jsonString(tick, "missing"), nil)

	var add struct {
		Add []struct{ Topic, Cursor string }
	}
	is.NoErr(json.Unmarshal(w5Add(`ab."c`), &add)) // the addition body is JSON, its cursor quoted
	is.Equal(add.Add[0].Cursor, `ab."c`)
	is.Equal(add.Add[0].Topic, "inventory")
}

func TestLivePathEscapesSubs(t *testing.T) {
	is := is.New(t)
	p := livePath("w", true, `[{"topic":"inventory"}]`, "&reconnect=1")
	u, err := url.Parse(p)
	is.NoErr(err)
	q := u.Query()
	is.Equal(q.Get("ws"), "w")
	is.Equal(q.Get("activity"), "1")
	is.Equal(q.Get("subs"), `[{"topic":"inventory"}]`) // subs survive the query
	is.Equal(q.Get("reconnect"), "1")
}

func TestSplitCursor(t *testing.T) {
	is := is.New(t)
	e, n := splitCursor("abc.def.12")
	is.Equal(string(e), "abc.def") // the epoch is up to the last dot
	is.Equal(n, int64(12))
	_, n = splitCursor("")
	is.Equal(n, int64(-1)) // no cursor
	_, n = splitCursor("a.b")
	is.Equal(n, int64(-1)) // no number
}

func TestClassifyStacks(t *testing.T) {
	is := is.New(t)
	dump := `goroutine 1 [running]:
main.main()
	/x/main.go:1 +0x1

goroutine 7 [IO wait]:
internal/poll.(*FD).Read(0x1)
	/go/src/internal/poll/fd_unix.go:1
net/http.(*conn).serve(0x2)
	/go/src/net/http/server.go:1
created by net/http.(*Server).Serve in goroutine 6

goroutine 8 [select]:
github.com/wharfhub/wharf/hub.(*LiveStream).Next(0x3)
	/w/hub/livestream.go:1
main.(*liveTap).ServeHTTP(0x4)
	/w/bench/load/live_env.go:1

goroutine 9 [chan receive]:
main.(*fanStream).read(0x5)
	/w/bench/load/live_fanout.go:1
created by main.runFanout in goroutine 1

goroutine 10 [select]:
net/http.(*persistConn).readLoop(0x6)
	/go/src/net/http/transport.go:1
created by github.com/wharfhub/wharf/x.y in goroutine 1
`
	server, client, other := classifyStacks([]byte(dump))
	is.Equal(server, 2) // net/http's connection and a stack through Wharf, even under the benchmark's tap
	is.Equal(client, 2) // package main alone
	is.Equal(other, 1)  // the HTTP client's loop; "created by" does not count
}

func TestParseVmRSS(t *testing.T) {
	is := is.New(t)
	n, ok := parseVmRSS("Name:\tload\nVmPeak:\t 9 kB\nVmRSS:\t  2048 kB\nThreads: 4\n")
	is.True(ok)
	is.Equal(n, int64(2048<<10)) // kB to bytes
	_, ok = parseVmRSS("Name:\tload\n")
	is.True(!ok) // no VmRSS line
	_, ok = parseVmRSS("VmRSS:\t2 MB\n")
	is.True(!ok) // an unknown unit
}
