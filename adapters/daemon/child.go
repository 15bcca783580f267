package daemon

import (
	"context"
	"io"

	"github.com/wharfhub/wharf/adapters/acp"
	"github.com/wharfhub/wharf/adapters/child"
)

// RunChild runs the workspace child (a running workspace session) with
// the real adapters (its coding agents over ACP): what a program running
// a Daemon does when it is started with `session` arguments, since the
// local backend starts each workspace's child as this very program
// (Config.SessionCommand). args are the arguments after `session`; an
// error wrapping child.ErrUsage is a usage mistake.
func RunChild(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return child.Run(ctx, args, stdin, stdout, stderr, child.Options{Agents: acp.ForChild})
}
