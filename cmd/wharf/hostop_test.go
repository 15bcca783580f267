package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// `wharf hostop` speaks its protocol over stdin and stdout: a hello, then
// answers by request id.
func TestHostopAnswersOverItsStandardStreams(t *testing.T) {
	is := is.New(t)
	frame := func(v any) []byte {
		b, _ := json.Marshal(v)
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	var in bytes.Buffer
	in.Write(frame(map[string]string{"protocol": "wharf-hostop/1"}))
	in.Write(frame(map[string]any{"id": 7, "op": "home"}))
	var out bytes.Buffer
	err := run(testContext(t), []string{"hostop"}, envOf(map[string]string{"HOME": "/home/ann"}), &in, &out, io.Discard)
	is.NoErr(err) // ends at EOF
	var got []string
	for r := bytes.NewReader(out.Bytes()); r.Len() > 0; {
		var n uint32
		is.NoErr(binary.Read(r, binary.BigEndian, &n))
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		is.NoErr(err)
		got = append(got, string(b))
	}
	is.Equal(len(got), 2)                                   // its hello and one answer
	is.Equal(got[0], `{"protocol":"wharf-hostop/1"}`)       // the hello
	is.True(strings.HasPrefix(got[1], `{"id":7,"path":"/`)) // the home, for request 7
	_, _, err = wharfCmd(testContext(t), nil, nil, "hostop", "x")
	is.True(err != nil && strings.Contains(err.Error(), "unexpected argument")) // no arguments
}
