package main

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// The command line of `wharf host` is checked before the disk is touched.
func TestHostCommandLinesAreCheckedFirst(t *testing.T) {
	t.Parallel()
	dir := stateDir(t)
	_, _, err := wharfCmd(testContext(t), nil, strings.NewReader("pw-for-ann-1\n"), "user", "add", "ann", "--password-stdin", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"host", "move"}, `unknown subcommand "move"`},
		{[]string{"host", "add", "gpu"}, "missing NAME and DESTINATION"},
		{[]string{"host", "add", "gpu", "a", "b"}, `unexpected argument "b"`},
		{[]string{"host", "remove"}, "missing NAME"},
		{[]string{"host", "list", "x"}, `unexpected argument "x"`},
		{[]string{"host", "remove", "nope"}, `no host named "nope"`},
		{[]string{"host", "add", "GPU", "gpu.example.net"}, "host name must be"},
		{[]string{"host", "add", "gpu", "-oProxyCommand=sh"}, "flag provided but not defined: -oProxyCommand"}, // never an option to ssh
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			is := is.New(t)
			_, _, err := wharfCmd(testContext(t), nil, nil, append(tc.args, "--state-dir", dir)...)
			is.True(err != nil && strings.Contains(err.Error(), tc.says)) // refused, saying why
		})
	}
	is := is.New(t)
	_, _, err = wharfCmd(testContext(t), nil, nil, "host")
	is.True(err != nil && strings.Contains(err.Error(), "missing subcommand")) // no subcommand
	out, _, err := wharfCmd(testContext(t), nil, nil, "host", "list", "--state-dir", dir)
	is.NoErr(err)     // list
	is.Equal(out, "") // nothing yet
}
