package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/statedir"
)

// host administers the other machines workspaces live on: `wharf host add
// NAME DESTINATION`, `list`, `remove NAME`. Like `wharf user`, it opens
// the database directly, so it works whether or not the daemon is
// running; add tests the machine first, over the system's ssh, as the
// dashboard's Add does.
func host(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("host: missing subcommand")
	}
	sub := args[0]
	fs := flag.NewFlagSet("wharf host "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	defState, _ := statedir.Default(getenv)
	stateDir := fs.String("state-dir", defState, "private state `directory`")
	sshConfig := fs.String("ssh-config", getenv(envName("ssh-config")), "ssh_config `file` (absolute), as wharf serve's --ssh-config")
	var pos []string
	rest := args[1:]
	for { // flags may come before, between or after the arguments
		if err := fs.Parse(rest); err != nil {
			return usageError{err}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	want := map[string]int{"add": 2, "list": 0, "remove": 1}
	n, ok := want[sub]
	switch {
	case !ok:
		return usagef("host: unknown subcommand %q", sub)
	case len(pos) < n:
		return usagef("host %s: missing %s", sub, map[string]string{"add": "NAME and DESTINATION", "remove": "NAME"}[sub])
	case len(pos) > n:
		return usagef("host %s: unexpected argument %q", sub, pos[n])
	case *stateDir == "":
		return usagef("host %s: no state directory; pass --state-dir", sub)
	}
	if err := checkSSHConfig(*sshConfig); err != nil {
		return usagef("host %s: --ssh-config: %v", sub, err)
	}
	if _, err := os.Stat(filepath.Join(*stateDir, "wharf.db")); err != nil {
		return fmt.Errorf("host %s: no Wharf database in %s (wharf serve or wharf user add creates one)", sub, *stateDir)
	}
	d, err := daemon.Open(ctx, daemon.Config{StateDir: *stateDir, Admin: true, SSH: sshCommand(*sshConfig)})
	if err != nil {
		return err
	}
	defer d.Close()
	h := d.Hub()
	switch sub {
	case "list":
		hosts, err := h.Hosts(ctx)
		if err != nil {
			return err
		}
		for _, v := range hosts {
			fmt.Fprintf(stdout, "%s\t%s\t%d workspaces\tadded %s\n", v.Name, v.Destination, v.Workspaces, v.AddedAt.UTC().Format(time.RFC3339))
		}
	case "add":
		fmt.Fprintf(stderr, "testing %s…\n", pos[1])
		if _, err := h.AddHost(ctx, pos[0], pos[1]); err != nil {
			return fmt.Errorf("host add: %s", describe(err))
		}
		fmt.Fprintf(stderr, "added host %q: its workspaces' backend is ssh:%s\n", pos[0], pos[0])
	case "remove":
		if err := h.RemoveHost(ctx, pos[0]); err != nil {
			return fmt.Errorf("host remove: %s", describe(err))
		}
		fmt.Fprintf(stderr, "removed host %q; nothing on it was touched\n", pos[0])
	}
	return nil
}

// sshCommand is the ssh command that reaches the hosts: nil (plain "ssh"
// with the user's own configuration) without a config file.
func sshCommand(config string) []string {
	if config == "" {
		return nil
	}
	return []string{"ssh", "-F", config}
}

// checkSSHConfig refuses a --ssh-config that is relative or unreadable;
// "" is none.
func checkSSHConfig(p string) error {
	if p == "" {
		return nil
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%q is not an absolute path", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	return f.Close()
}
