package main

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/matryer/is"
)

func TestReadEvents(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []event
		wantErr error
	}{
		{
			name: "LF",
			in:   "event: hello\ndata: {\"streamId\":\"s\"}\n\n",
			want: []event{{"hello", `{"streamId":"s"}`}},
		},
		{
			name: "CRLF",
			in:   "event: live\r\ndata: a\r\n\r\nevent: live\r\ndata: b\r\n\r\n",
			want: []event{{"live", "a"}, {"live", "b"}},
		},
		{
			name: "lone CR",
			in:   "event: live\rdata: a\r\r",
			want: []event{{"live", "a"}},
		},
		{
			name: "mixed line ends",
			in:   "event: live\r\ndata: a\n\r\n",
			want: []event{{"live", "a"}},
		},
		{
			name: "multi-line data",
			in:   "event: live\ndata: {\ndata:  \"x\": 1\ndata: }\n\n",
			want: []event{{"live", "{\n \"x\": 1\n}"}},
		},
		{
			name: "comment frames",
			in:   ": open\n\nevent: hello\ndata: h\n\n: keepalive\n\n: keepalive\r\n\r\nevent: live\ndata: l\n\n",
			want: []event{{"hello", "h"}, {"live", "l"}},
		},
		{
			name: "comment inside an event",
			in:   "event: live\n: note\ndata: a\n\n",
			want: []event{{"live", "a"}},
		},
		{
			name: "event without data is not dispatched",
			in:   "event: hello\n\nevent: live\ndata: a\n\n",
			want: []event{{"live", "a"}},
		},
		{
			name: "empty data is dispatched",
			in:   "event: live\ndata\n\n",
			want: []event{{"live", ""}},
		},
		{
			name: "no name means message",
			in:   "data: a\n\nevent:\ndata: b\n\n",
			want: []event{{"message", "a"}, {"message", "b"}},
		},
		{
			name: "no space after the colon",
			in:   "event:live\ndata:a\n\n",
			want: []event{{"live", "a"}},
		},
		{
			name: "id, retry and unknown fields are ignored",
			in:   "id: 7\nretry: 10\nevent: live\nfoo: bar\ndata: a\n\n",
			want: []event{{"live", "a"}},
		},
		{
			name: "name does not carry over",
			in:   "event: hello\ndata: a\n\ndata: b\n\n",
			want: []event{{"hello", "a"}, {"message", "b"}},
		},
		{
			name: "byte order mark",
			in:   "\uFEFFevent: live\ndata: a\n\n",
			want: []event{{"live", "a"}},
		},
		{
			name: "empty stream",
			in:   "",
		},
		{
			name:    "truncated last frame",
			in:      "event: live\ndata: a\n\nevent: live\ndata: b\n",
			want:    []event{{"live", "a"}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "truncated last line",
			in:      "event: live\ndata: a\n\nevent: live\ndata: {\"x",
			want:    []event{{"live", "a"}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "truncated comment",
			in:      ": open\n\n: keep",
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name: "long data line",
			in:   "event: live\ndata: " + strings.Repeat("x", 1<<20) + "\n\n",
			want: []event{{"live", strings.Repeat("x", 1<<20)}},
		},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, reader := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				is := is.New(t)
				var got []event
				err := readEvents(reader(tt.in), func(ev event) bool {
					got = append(got, ev)
					return true
				})
				is.Equal(err, tt.wantErr)        // the end of the stream is reported as expected
				is.Equal(len(got), len(tt.want)) // every complete event, no other
				for i := range min(len(got), len(tt.want)) {
					is.Equal(got[i], tt.want[i]) // each event's name and data
				}
			})
		}
	}
}

func TestReadEventsStops(t *testing.T) {
	is := is.New(t)
	n := 0
	err := readEvents(strings.NewReader("data: a\n\ndata: b\n\ndata: c"), func(event) bool {
		n++
		return false
	})
	is.NoErr(err)  // stopping is not an error, whatever follows
	is.Equal(n, 1) // nothing is yielded after false
}

func TestReadEventsReadError(t *testing.T) {
	is := is.New(t)
	boom := io.ErrClosedPipe
	r := io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom))
	var got []event
	err := readEvents(r, func(ev event) bool { got = append(got, ev); return true })
	is.Equal(err, boom)                      // a failing reader's error is returned
	is.Equal(got, []event{{"message", "a"}}) // after the events before it
}
