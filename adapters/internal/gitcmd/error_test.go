package gitcmd_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

func TestErrorBoundsStderr(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	stderr := append(bytes.Repeat([]byte("x"), 10*gitcmd.MaxErrorTail), "fatal: the end"...)
	cause := errors.New("boom")
	e := &gitcmd.Error{Args: []string{"rev-parse"}, Code: -1, Stderr: stderr, Err: cause}
	msg := e.Error()
	is.True(len(msg) < 2*gitcmd.MaxErrorTail)        // the stderr in a cause is bounded
	is.True(strings.Contains(msg, "fatal: the end")) // and keeps its end
	is.True(errors.Is(e, cause))                     // the reason stays reachable
}

func TestErrorNamesTheCommand(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	e := &gitcmd.Error{Dir: "/w", Args: []string{"symbolic-ref", "--quiet", "HEAD"}, Code: 128, Stderr: []byte("fatal: \xff\n")}
	is.Equal(e.Error(), "git -C /w symbolic-ref --quiet HEAD: exit status 128; stderr tail: \"fatal: \uFFFD\\n\"") // what ran, how it ended, what it said
	is.Equal(errors.Unwrap(e), nil)                                                                                // an exit status has no further cause
}
