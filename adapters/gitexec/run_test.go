package gitexec

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestCommandEnv(t *testing.T) {
	is := is.New(t)
	env := commandEnv([]string{
		"HOME=/home/ann", "GIT_DIR=/x", "GIT_WORK_TREE=/y", "GIT_CONFIG_GLOBAL=/z",
		"LANG=de_DE.UTF-8", "LC_ALL=de_DE.UTF-8", "XDG_CONFIG_HOME=/home/ann/.config", "GITHUB_TOKEN=t",
	})
	is.Equal(env, []string{
		"HOME=/home/ann", "XDG_CONFIG_HOME=/home/ann/.config", "GITHUB_TOKEN=t",
		"LC_ALL=C", "LANG=C", "GIT_TERMINAL_PROMPT=0",
	}) // GIT_* and the locale replaced; everything else kept in order
}

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

func TestCommandErrorBoundsStderr(t *testing.T) {
	is := is.New(t)
	stderr := append(bytes.Repeat([]byte("x"), 10*causeTail), "fatal: the end"...)
	cause := errors.New("boom")
	e := &commandError{args: []string{"rev-parse"}, code: -1, stderr: stderr, err: cause}
	msg := e.Error()
	is.True(len(msg) < 2*causeTail)                  // the stderr in a cause is bounded
	is.True(strings.Contains(msg, "fatal: the end")) // and keeps its end
	is.True(errors.Is(e, cause))                     // the reason stays reachable
}
