package main

import (
	"context"
	"errors"
	"io"

	"github.com/wharfhub/wharf/adapters/child"
	"github.com/wharfhub/wharf/adapters/daemon"
)

// sessionCmd runs `wharf session`: the workspace child the local backend
// starts, one per running workspace. It is internal, so the usage text
// does not list it; adapters/child documents its arguments and protocol.
// SIGTERM reaches it as ctx's cancellation (see main).
func sessionCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := daemon.RunChild(ctx, args, stdin, stdout, stderr)
	if errors.Is(err, child.ErrUsage) {
		return usageError{err}
	}
	return err
}
