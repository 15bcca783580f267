package agentscript

import (
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestPace(t *testing.T) {
	is := is.New(t)
	rate, count := PaceArgs("pace 50 500")
	is.Equal(rate, 50.0) // the rate
	is.Equal(count, 500) // the count
	rate, count = PaceArgs("pace x -1")
	is.Equal(rate, 100.0) // defaults for what is not a positive number
	is.Equal(count, 100)
	sent := time.Unix(1795000000, 123456789)
	chunk := PaceChunk(7, sent)
	is.Equal(chunk, "[p 7 1795000000123456789]")
	seq, ns, ok := ParsePaceChunk([]byte(`{"type":"item.text_delta","delta":"` + chunk + `"}`))
	is.True(ok)                   // found inside an event
	is.Equal(seq, 7)              // its sequence
	is.Equal(ns, sent.UnixNano()) // and its time
	_, _, ok = ParsePaceChunk([]byte(`{"delta":"[p 7]"}`))
	is.True(!ok) // no time
	_, _, ok = ParsePaceChunk([]byte(`{"delta":"hello"}`))
	is.True(!ok) // no chunk
}

func TestSizeArgs(t *testing.T) {
	is := is.New(t)
	a, b := SizeArgs("text 100 7", 1, 2)
	is.Equal(a, 100) // the first number
	is.Equal(b, 7)   // and the second
	a, b = SizeArgs("text", 1, 2)
	is.Equal(a, 1) // defaults when absent
	is.Equal(b, 2)
	a, b = SizeArgs("tools -3 99999999999", 1, 2)
	is.Equal(a, 1) // or not a positive number
	is.Equal(b, 2) // or past 1 GiB
}
