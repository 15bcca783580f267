package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/matryer/is"
)

// The fast path of appendString must write exactly what the encoder
// would, for plain strings and for every kind it hands to the encoder.
func TestAppendStringMatchesTheEncoder(t *testing.T) {
	for _, s := range []string{"", "app", "abc123.42", "compareTarget=base&scope=folder", `say "hi"`, `back\slash`,
		"tab\there", "<b>", "café", "\u2028", "\x7f", string([]byte{0xff, 'a'})} {
		t.Run(s, func(t *testing.T) {
			is := is.New(t)
			var buf bytes.Buffer
			appendString(&buf, s)
			want, _ := json.Marshal(s)
			is.Equal(buf.String(), string(want)) // the encoder's bytes
		})
	}
}
