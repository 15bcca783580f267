package ptyflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow/ptyflowtest"
)

// shell is a command running script, marked by an environment entry of
// its own that every process it starts inherits.
func shell(t *testing.T, script string) (ptyflow.Command, string) {
	mark := "WHARF_PTYFLOW_TEST=" + t.Name()
	return ptyflow.Command{Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin", mark}, Dir: "/"}, mark
}

// within waits for ch, failing the test after d.
func within(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %s", what, d)
	}
}

// link is a find for Expect: a whole link after "visit:".
func link(got *string) func([]byte) bool {
	return func(text []byte) bool {
		l, done, err := ptyflow.URLAfter(text, "visit:")
		*got = l
		return done && err == nil
	}
}

func TestALineTypedIntoTheTerminalIsNotEchoedBack(t *testing.T) {
	is := is.New(t)
	const secret = "code-4f1e#state-9a"
	cmd, _ := shell(t, `printf 'visit: https://a.example/x?state=s\r\n'; IFS= read -r line; printf 'got %d\n' "${#line}"; exit 7`)
	term, err := ptyflow.Start(cmd)
	is.NoErr(err) // it starts
	defer term.Kill()
	var l string
	is.NoErr(term.Expect(t.Context(), link(&l))) // the link is found
	is.Equal(l, "https://a.example/x?state=s")   // whole
	echoed := term.Watch(secret)
	answered := term.Watch("got 18")
	is.NoErr(term.Type(t.Context(), secret)) // the line is typed
	within(t, answered, 10*time.Second, "the program read the line")
	within(t, term.Exited(), 10*time.Second, "the program exits")
	is.Equal(term.ExitCode(), 7) // its exit status is read
	select {
	case <-echoed:
		t.Fatal("the typed line came back in the output")
	default:
	}
}

func TestKillEndsTheProgramsWholeGroup(t *testing.T) {
	is := is.New(t)
	cmd, mark := shell(t, `sleep 300 & printf 'visit: https://a.example/\n'; wait`)
	term, err := ptyflow.Start(cmd)
	is.NoErr(err) // it starts
	var l string
	is.NoErr(term.Expect(t.Context(), link(&l))) // it is running
	is.True(len(ptyflowtest.Left(mark)) > 0)     // with its child
	term.Kill()
	within(t, term.Exited(), time.Second, "exited once Kill returned")
	is.Equal(term.ExitCode(), -1)                                     // a signal ended it
	is.Equal(len(ptyflowtest.Left(mark)), 0)                          // nothing of the group is left
	is.True(errors.Is(term.Type(t.Context(), "x"), ptyflow.ErrEnded)) // nothing can be typed any more
}

func TestAProgramThatExitsTakesItsGroupWithIt(t *testing.T) {
	is := is.New(t)
	cmd, mark := shell(t, `sleep 300 & exit 0`)
	term, err := ptyflow.Start(cmd)
	is.NoErr(err) // it starts
	defer term.Kill()
	within(t, term.Exited(), 10*time.Second, "the program exits")
	is.Equal(term.ExitCode(), 0)             // by itself
	is.Equal(len(ptyflowtest.Left(mark)), 0) // and its child was killed with it
}

func TestExpectFails(t *testing.T) {
	for _, c := range []struct {
		name, script string
		timeout      time.Duration
		want         error
	}{
		{"when the program ends without the link", `printf 'no link here\n'; exit 3`, time.Minute, ptyflow.ErrEnded},
		{"when the program floods it without the link", `head -c 200000 /dev/zero | tr '\0' a; sleep 300`, time.Minute, ptyflow.ErrTooMuch},
		{"when the link never ends", `printf 'visit: https://a.example/'; head -c 100000 /dev/zero | tr '\0' a; sleep 300`, time.Minute, ptyflow.ErrTooMuch},
		{"when its context ends first", `sleep 300`, 200 * time.Millisecond, context.DeadlineExceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			cmd, mark := shell(t, c.script)
			term, err := ptyflow.Start(cmd)
			is.NoErr(err) // it starts
			ctx, cancel := context.WithTimeout(t.Context(), c.timeout)
			defer cancel()
			var l string
			err = term.Expect(ctx, link(&l))
			is.True(errors.Is(err, c.want)) // Expect says why
			term.Kill()
			is.Equal(len(ptyflowtest.Left(mark)), 0) // and Kill leaves nothing
		})
	}
}

func TestAProgramPastMaxOutputIsKilled(t *testing.T) {
	is := is.New(t)
	cmd, mark := shell(t, `yes`)
	term, err := ptyflow.Start(cmd)
	is.NoErr(err) // it starts
	defer term.Kill()
	within(t, term.Exited(), time.Minute, "the flood is stopped")
	is.Equal(term.ExitCode(), -1)            // by a signal
	is.Equal(len(ptyflowtest.Left(mark)), 0) // nothing is left
}

func TestAWatchSeesOnlyWhatFollowsTheLink(t *testing.T) {
	is := is.New(t)
	cmd, _ := shell(t, `printf 'FAILED before\r\nvisit: https://a.example/\r\n'; IFS= read -r line; printf 'FAILED after\r\n'; IFS= read -r line`)
	term, err := ptyflow.Start(cmd)
	is.NoErr(err) // it starts
	defer term.Kill()
	seen := term.Watch("FAILED")
	var l string
	is.NoErr(term.Expect(t.Context(), link(&l))) // the link is found
	select {
	case <-seen:
		// All before the link was read when Expect returned.
		t.Fatal("the marker before the link was taken")
	default:
	}
	is.NoErr(term.Type(t.Context(), "go")) // a line is typed
	within(t, seen, 10*time.Second, "the marker after the link is seen")
}
