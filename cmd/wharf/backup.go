package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/statedir"
)

// backupCmd is `wharf backup FILE` and `wharf restore FILE`: the archive
// of a state directory, written beside a running daemon or not, and
// unpacked into a new or empty one (daemon.Backup, daemon.Restore).
func backupCmd(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("wharf "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	defState, _ := statedir.Default(getenv)
	stateDir := fs.String("state-dir", defState, "private state `directory`")
	// Flags may come before or after FILE.
	file, extra, err := parseAdmin(fs, args, getenv)
	if err != nil {
		return err
	}
	switch {
	case len(extra) > 0:
		return usagef("%s: unexpected argument %q", name, extra[0])
	case file == "":
		return usagef("%s: missing FILE", name)
	case *stateDir == "":
		return usagef("%s: no state directory; pass --state-dir", name)
	}
	if name == "restore" {
		m, err := daemon.Restore(ctx, file, *stateDir)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "restored %s (made by wharf %s at %s, schema %d: %s) into %s\nstart it with: wharf serve --state-dir %s\n",
			file, m.WharfVersion, m.Created.Format(time.RFC3339), m.Schema, strings.Join(m.Files, ", "), *stateDir, *stateDir)
		return nil
	}
	m, err := daemon.Backup(ctx, *stateDir, file, version())
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s (schema %d: %s)\n", file, m.Schema, strings.Join(m.Files, ", "))
	fmt.Fprintln(stderr, "it holds the Hub's keys: keep it as private as the state directory")
	return nil
}
