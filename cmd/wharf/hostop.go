package main

import (
	"context"
	"io"
	"os/signal"
	"syscall"

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

// hostcloneCmd runs `wharf hostclone`: one clone on this machine, for a
// Hub whose workspace is cloned onto it (the ssh backend starts it, lent
// the clone's credentials). It is internal, like hostop. A broken pipe
// must not kill it before it has killed git and removed what git wrote:
// the end of its input does that.
func hostcloneCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return usagef("hostclone: unexpected argument %q", args[0])
	}
	signal.Ignore(syscall.SIGPIPE)
	return daemon.RunHostClone(ctx, stdin, stdout, stderr)
}
