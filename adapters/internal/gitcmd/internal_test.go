package gitcmd

import (
	"testing"

	"github.com/matryer/is"
)

func TestCapBuffer(t *testing.T) {
	tests := []struct {
		name      string
		keepTail  bool
		writes    []string
		want      string
		truncated bool
	}{
		{"head fits", false, []string{"ab", "cd"}, "abcd", false},
		{"head overflows", false, []string{"abc", "def"}, "abcd", true},
		{"tail fits", true, []string{"ab", "cd"}, "abcd", false},
		{"tail overflows in small writes", true, []string{"ab", "cd", "ef", "gh", "ij"}, "ghij", true},
		{"tail overflows in one write", true, []string{"abcdefgh"}, "efgh", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			is := is.New(t)
			b := &capBuffer{max: 4, keepTail: tt.keepTail}
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				is.NoErr(err)       // writes never fail, so the pipe keeps draining
				is.Equal(n, len(w)) // and report every byte
			}
			is.Equal(string(b.Bytes()), tt.want)  // kept bytes
			is.Equal(b.Truncated(), tt.truncated) // overflow noticed
		})
	}
}
