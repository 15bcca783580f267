package main

import (
	"context"
	"errors"
	"io"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/session"
)

// sessionCmd runs `wharf session`: the workspace child the local backend
// starts, one per running workspace. It is internal, so the usage text
// does not list it; adapters/session documents its arguments and protocol.
// SIGTERM reaches it as ctx's cancellation (see main).
func sessionCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	err := daemon.RunSession(ctx, args, stdin, stdout, stderr)
	if errors.Is(err, session.ErrUsage) {
		return usageError{err}
	}
	return err
}
