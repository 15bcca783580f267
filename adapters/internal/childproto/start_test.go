package childproto_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

func TestArgsRoundTrip(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, a := range []childproto.Args{
		{WorkspaceID: "alpha", Path: "/home/ann/code/alpha", Socket: "/state/sessions/0123456789ab.sock"},
		{WorkspaceID: "-x", Path: "/a path/with spaces", Socket: "--socket"},
		{WorkspaceID: "b", Path: "/p", Socket: "/s", DataDir: "/state/workspaces/ab",
			Agents: map[string][]string{"scripted": {"/bin/agent", "--state", "a b"}, "opencode": {"oc", "acp"}}},
		{WorkspaceID: "c", Path: "/p", Socket: "/s", DetachGrace: 5*time.Minute + 30*time.Millisecond},
	} {
		argv := a.Argv()
		is.Equal(argv[0], childproto.Subcommand) // the subcommand first
		got, err := childproto.ParseArgs(argv[1:], io.Discard)
		is.NoErr(err)    // the child reads what the Hub wrote
		is.Equal(got, a) // every argument back
	}
}

func TestParseArgsRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no flags", nil, "required"},
		{"missing socket", []string{"--workspace-id", "a", "--path", "/p"}, "required"},
		{"empty id", []string{"--workspace-id", "", "--path", "/p", "--socket", "s"}, "required"},
		{"extra argument", []string{"--workspace-id", "a", "--path", "/p", "--socket", "s", "x"}, "unexpected"},
		{"unknown flag", []string{"--bogus"}, "bogus"},
		{"flag without value", []string{"--workspace-id"}, "workspace-id"},
		{"agent without a command", []string{"--agent", "x=[]"}, "agent"},
		{"agent id with a colon", []string{"--agent", `a:b=["x"]`}, "agent"},
		{"negative grace", []string{"--workspace-id", "a", "--path", "/p", "--socket", "s", "--detach-grace", "-1s"}, "detach-grace"},
		{"grace without a unit", []string{"--workspace-id", "a", "--path", "/p", "--socket", "s", "--detach-grace", "5"}, "detach-grace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			var usage strings.Builder
			_, err := childproto.ParseArgs(tc.args, &usage)
			is.True(errors.Is(err, childproto.ErrUsage))    // a usage error
			is.True(strings.Contains(err.Error(), tc.want)) // saying why
		})
	}
	t.Run("help", func(t *testing.T) {
		is := is.New(t)
		var usage strings.Builder
		_, err := childproto.ParseArgs([]string{"-h"}, &usage)
		is.True(errors.Is(err, flag.ErrHelp))                     // help is no usage error
		is.True(!errors.Is(err, childproto.ErrUsage))             // and not marked as one
		is.True(strings.Contains(usage.String(), "workspace-id")) // the usage names the flags
	})
}

func TestReadyRoundTrip(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	var out bytes.Buffer
	is.NoErr(childproto.WriteReady(&out))        // announced
	is.Equal(out.String(), childproto.ReadyLine) // exactly the line
	out.WriteString("more output")
	is.NoErr(childproto.ReadReady(iotest.HalfReader(&out))) // read back, however the pipe splits it
	is.Equal(out.String(), "more output")                   // and nothing past the line is consumed
}

func TestReadReadyRefuses(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", childproto.MaxReadyLine+10)
	for _, tc := range []struct {
		name  string
		r     io.Reader
		want  error
		bytes string
	}{
		{"another line", strings.NewReader("ready?\n"), childproto.ErrBadReadyLine, "(7 bytes)"},
		{"a line with CR", strings.NewReader("ready\r\n"), childproto.ErrBadReadyLine, "(7 bytes)"},
		{"a line too long", strings.NewReader(long + "\n"), childproto.ErrBadReadyLine, "(64 bytes)"},
		{"nothing", strings.NewReader(""), childproto.ErrNoReadyLine, ""},
		{"an unfinished line", strings.NewReader("ready"), childproto.ErrNoReadyLine, ""},
		{"a failing pipe", iotest.ErrReader(errors.New("boom")), childproto.ErrNoReadyLine, ""},
		{"a reader stuck at nothing", stuckReader{}, childproto.ErrNoReadyLine, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := childproto.ReadReady(tc.r)
			is.True(errors.Is(err, tc.want))                  // refused as such
			is.True(strings.Contains(err.Error(), tc.bytes))  // with the length only
			is.True(!strings.Contains(err.Error(), "ready?")) // never quoting the child
		})
	}
}

// stuckReader returns nothing and no error, forever.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }
