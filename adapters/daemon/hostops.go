package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/wharfhub/wharf/adapters/gitexec"
	"github.com/wharfhub/wharf/adapters/internal/hostop"
	"github.com/wharfhub/wharf/adapters/osfs"
)

// RunHostOps serves the Hub's folder and repository operations on this
// machine over stdin and stdout (adapters/internal/hostop): what a
// program running a Daemon does when started as `wharf hostop`, which the
// ssh backend runs on a host, over its connection, for the workspaces that
// live there. It runs the same osfs and gitexec code the Hub runs on its
// own machine, with this login's environment; stderr takes its logs.
func RunHostOps(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	git := gitexec.New(gitexec.Options{Logger: log, Env: os.Environ()})
	defer git.Close()
	return hostop.Serve(ctx, stdin, stdout, osfs.FS{}, git)
}

// RunHostGit runs one git command lent credentials on this machine for
// a Hub (`wharf hostgit`, adapters/internal/hostop's clone.go): a clone
// or a fetch, the request and a clone's input from stdin, a clone's
// terminal and the end on stdout, lent the credentials the Hub projected
// here, by the same gitexec code the Hub runs at home. It returns once
// git has ended.
func RunHostGit(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	git := gitexec.New(gitexec.Options{Logger: log, Env: os.Environ()})
	defer git.Close()
	return hostop.ServeLent(ctx, stdin, stdout, git)
}
