package daemon

import (
	"context"
	"io"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/adapters/session"
)

// RunSession runs the workspace session child with the real adapters (its
// coding agents over ACP): what a program running a Daemon does when it
// is started with `session` arguments, since the local backend starts
// each workspace's child as this very program (Config.SessionCommand).
// args are the arguments after `session`; an error wrapping
// session.ErrUsage is a usage mistake.
func RunSession(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return session.Run(ctx, args, stdin, stdout, stderr, session.Options{Agents: acp.ForSession})
}
