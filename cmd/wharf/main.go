// Command wharf is the Wharf Hub daemon and its administration tool.
//
//	wharf serve [flags]        run the Hub
//	wharf user add NAME        add a user (also: passwd, remove, list)
//	wharf service install      run wharf serve as the user's service (also: uninstall, status)
//	wharf backup FILE          write a backup of the state directory
//	wharf restore FILE         restore one into a new state directory
//	wharf version              print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown; restoring the default
	// handling lets a second one end the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	var status exitStatus
	if errors.As(err, &status) {
		os.Exit(int(status))
	}
	fmt.Fprintln(os.Stderr, "wharf:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}

// usageError marks a mistake on the command line: wharf exits 2 for it,
// and 1 for any other failure.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// usagef returns a usageError with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

const usage = `usage:
  wharf serve [flags]                       run the Hub (wharf serve -h for flags)
  wharf user add NAME [--password-stdin]    add a user
  wharf user passwd NAME [--password-stdin] change a user's password (ends its sessions)
  wharf user remove NAME                    remove a user and its sessions
  wharf user list                           list users
  wharf host add NAME DESTINATION           add a machine workspaces can live on, tested over ssh first
  wharf host remove NAME                    remove a machine no workspace lives on (nothing on it changes)
  wharf host list                           list the machines
  wharf service install [serve flags]       run wharf serve at boot as your service (systemd, launchd)
  wharf service uninstall|status            remove it, show it (wharf service -h)
  wharf backup FILE [--state-dir DIR]       write a backup archive (0600) of the state, while serving or not
  wharf restore FILE [--state-dir DIR]      restore a backup into a new or empty state directory
  wharf version                             print the version
`

// run is the whole program, with its environment passed in so tests can
// drive it: it returns when the command is done or ctx is cancelled.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stdout, stderr)
	case "user":
		return user(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "host":
		return host(ctx, args[1:], getenv, stdout, stderr)
	case "service":
		return serviceCmd(ctx, args[1:], getenv, stdout, stderr)
	case "backup", "restore":
		return backupCmd(ctx, args[0], args[1:], getenv, stderr)
	case "session":
		return sessionCmd(ctx, args[1:], stdin, stdout, stderr)
	case "hostop":
		return hostopCmd(ctx, args[1:], stdin, stdout, stderr)
	case "hostgit":
		return hostgitCmd(ctx, args[1:], stdin, stdout, stderr)
	case "git-credential":
		return gitCredentialCmd(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "gpg":
		return gpgCmd(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "version":
		warnToolchain(stderr)
		fmt.Fprintln(stdout, "wharf", version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usagef("unknown command %q", args[0])
}
