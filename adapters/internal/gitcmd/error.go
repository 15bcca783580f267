package gitcmd

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrTimeout marks a command killed at its Options.Timeout.
	ErrTimeout = errors.New("timed out")
	// ErrOutputTooLarge marks a command whose stdout overflowed
	// Options.MaxStdout.
	ErrOutputTooLarge = errors.New("stdout too large")
	// ErrRefused marks a command gitcmd would not run (see Run, RunIn).
	ErrRefused = errors.New("refused")
	// ErrUnexpectedOutput marks an answer of git that Discover cannot read.
	ErrUnexpectedOutput = errors.New("unexpected output")
)

// MaxErrorTail bounds the stderr an Error's text quotes.
const MaxErrorTail = 1 << 10

// Error is the private cause of a failed git command, for logs only: what
// ran, how it ended and a bounded tail of its stderr. It never becomes a
// public message. Runner.Run returns one for a command that did not run to
// completion; callers build one for an exit status they take for a
// failure.
type Error struct {
	Dir    string   // the -C directory; "" when none
	Args   []string // the command's own arguments
	Code   int      // the exit status; -1 when git did not exit on its own
	Stderr []byte   // the end of its stderr
	Err    error    // why the command failed; nil for its exit status alone
}

// Error names the command, says why it failed and quotes at most
// MaxErrorTail bytes of the end of its stderr.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("git")
	if e.Dir != "" {
		fmt.Fprintf(&b, " -C %s", e.Dir)
	}
	for _, a := range e.Args {
		b.WriteString(" " + a)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	} else {
		fmt.Fprintf(&b, ": exit status %d", e.Code)
	}
	if tail := e.Stderr; len(tail) > 0 {
		if len(tail) > MaxErrorTail {
			tail = tail[len(tail)-MaxErrorTail:]
		}
		fmt.Fprintf(&b, "; stderr tail: %q", strings.ToValidUTF8(string(tail), "\uFFFD"))
	}
	return b.String()
}

// Unwrap returns why the command failed.
func (e *Error) Unwrap() error { return e.Err }
