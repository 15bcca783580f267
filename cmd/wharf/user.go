package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/wharfhub/wharf/adapters/daemon"
	"github.com/wharfhub/wharf/adapters/statedir"
	"github.com/wharfhub/wharf/hub"
)

// user administers users. It opens the database directly, so it works
// whether or not the daemon is running. Everything the command line and the
// password can get wrong is checked before the disk is touched; only add
// creates a state directory, so users can be set up before the first serve.
func user(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("user: missing subcommand")
	}
	sub := args[0]
	fs := flag.NewFlagSet("wharf user "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	defState, _ := statedir.Default(getenv)
	stateDir := fs.String("state-dir", defState, "private state `directory`")
	fromStdin := fs.Bool("password-stdin", false, "read the password from standard input (one line)")
	// Flags may come before or after NAME.
	name, extra, err := parseAdmin(fs, args[1:], getenv)
	if err != nil {
		return err
	}
	if len(extra) > 0 {
		return usagef("user %s: unexpected argument %q", sub, extra[0])
	}
	needName := sub == "add" || sub == "passwd" || sub == "remove"
	switch {
	case sub != "list" && !needName:
		return usagef("user: unknown subcommand %q", sub)
	case needName && name == "":
		return usagef("user %s: missing NAME", sub)
	case sub == "list" && name != "":
		return usagef("user list: unexpected argument %q", name)
	case *stateDir == "":
		return usagef("user %s: no state directory; pass --state-dir", sub)
	}
	if sub == "add" {
		if err := hub.ValidateUserName(name); err != nil {
			return fmt.Errorf("user add: %s", describe(err))
		}
	}
	var password string
	if sub == "add" || sub == "passwd" {
		var err error
		if password, err = readPassword(stdin, *fromStdin, stderr); err != nil {
			return fmt.Errorf("user %s: %v", sub, err)
		}
		if err := hub.ValidatePassword(password); err != nil {
			return fmt.Errorf("user %s: %s", sub, describe(err))
		}
	}
	if sub != "add" {
		if _, err := os.Stat(filepath.Join(*stateDir, "wharf.db")); err != nil {
			return fmt.Errorf("user %s: no Wharf database in %s (wharf serve or wharf user add creates one)", sub, *stateDir)
		}
	}

	d, err := daemon.Open(ctx, daemon.Config{StateDir: *stateDir, Admin: true})
	if err != nil {
		return err
	}
	defer d.Close()
	h := d.Hub()

	switch sub {
	case "list":
		users, err := h.Users(ctx)
		if err != nil {
			return err
		}
		for _, u := range users {
			fmt.Fprintf(stdout, "%s\tcreated %s\n", u.Name, u.CreatedAt.UTC().Format(time.RFC3339))
		}
	case "remove":
		if err := h.RemoveUser(ctx, name); err != nil {
			return fmt.Errorf("user remove: %s", describe(err))
		}
		fmt.Fprintf(stderr, "removed user %q and its sessions\n", name)
	case "add":
		if err := h.AddUser(ctx, name, password); err != nil {
			return fmt.Errorf("user add: %s", describe(err))
		}
		fmt.Fprintf(stderr, "added user %q\n", name)
	case "passwd":
		if err := h.SetPassword(ctx, name, password); err != nil {
			return fmt.Errorf("user passwd: %s", describe(err))
		}
		fmt.Fprintf(stderr, "changed the password of %q and ended its sessions\n", name)
	}
	return nil
}

func describe(err error) string {
	if m := hub.MessageOf(err); m != "" {
		return m
	}
	return err.Error()
}

// readPassword reads one line from stdin (--password-stdin: exactly one
// trailing newline is removed, other whitespace is kept), or prompts twice
// on a terminal without echo.
func readPassword(stdin io.Reader, fromStdin bool, stderr io.Writer) (string, error) {
	if fromStdin {
		line, err := bufio.NewReader(io.LimitReader(stdin, hub.MaxPasswordLen+2)).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", err
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			return "", errors.New("no password on standard input")
		}
		return line, nil
	}
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return "", errors.New("no terminal to ask for a password; use --password-stdin")
	}
	fmt.Fprint(stderr, "Password: ")
	a, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(stderr)
	if err != nil {
		return "", err
	}
	fmt.Fprint(stderr, "Again: ")
	b, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(stderr)
	if err != nil {
		return "", err
	}
	if string(a) != string(b) {
		return "", errors.New("the passwords differ")
	}
	return string(a), nil
}
