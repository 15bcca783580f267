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

// hostgitCmd runs `wharf hostgit`: one clone or fetch on this machine,
// lent credentials, for a Hub whose workspace lives here (the ssh backend
// starts it). It is internal, like hostop. A broken pipe must not kill it
// before it has killed git and removed what git wrote: the end of its
// input does that.
func hostgitCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		return usagef("hostgit: unexpected argument %q", args[0])
	}
	signal.Ignore(syscall.SIGPIPE)
	return daemon.RunHostGit(ctx, stdin, stdout, stderr)
}
