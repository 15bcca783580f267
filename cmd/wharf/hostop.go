package main

import (
	"context"
	"io"

	"github.com/wharfhub/wharf/adapters/daemon"
)

// hostopCmd runs `wharf hostop`: the Hub's folder and repository
// operations served over stdin and stdout, which the ssh backend starts
// on a host for the workspaces there. It is internal, so the usage text
// does not list it; it takes no arguments.
func hostopCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return usagef("hostop: unexpected argument %q", args[0])
	}
	return daemon.RunHostOps(ctx, stdin, stdout, stderr)
}
