package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/wharfhub/wharf/adapters/osservice"
)

// The service's names: the systemd unit wharf.service, the launchd agent
// serviceLabel.plist.
const (
	serviceName  = "wharf"
	serviceLabel = "com.github.wharfhub.wharf"
)

const serviceUsage = `usage:
  wharf service install [--print] [--force] [serve flags]
        run wharf serve with these flags as your service (a systemd user unit, a launchd agent):
        started now, at every boot (with linger) or login, and again after a failure
        --print   print the unit and do nothing else
        --force   replace a different installed unit
        (the serve flags are checked as wharf serve checks them: see wharf serve -h)
  wharf service uninstall                   stop the service and remove its unit
  wharf service status                      show the unit's command and state
`

// serviceCmd installs, removes and reports wharf serve as the user's
// service. It talks to the service manager only through its tools found on
// $PATH (systemctl, loginctl, launchctl).
func serviceCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, serviceUsage)
		return usagef("service: missing subcommand")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "install":
		return serviceInstall(ctx, rest, getenv, stdout, stderr)
	case "uninstall", "status":
		fs := flag.NewFlagSet("wharf service "+sub, flag.ContinueOnError)
		fs.SetOutput(stderr)
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{err}
		}
		if fs.NArg() > 0 {
			return usagef("service %s: unexpected argument %q", sub, fs.Arg(0))
		}
	case "help", "-h", "--help":
		fmt.Fprint(stdout, serviceUsage)
		return nil
	default:
		fmt.Fprint(stderr, serviceUsage)
		return usagef("service: unknown subcommand %q", sub)
	}
	m, err := serviceManager(getenv)
	if err != nil {
		return err
	}
	if sub == "uninstall" {
		removed, err := m.Uninstall(ctx)
		if err != nil {
			return fmt.Errorf("service uninstall: %w", err)
		}
		if removed {
			fmt.Fprintf(stderr, "stopped the service and removed %s\n", m.Path())
		} else {
			fmt.Fprintf(stderr, "no service is installed at %s: nothing to do\n", m.Path())
		}
		return nil
	}
	return serviceStatus(ctx, m, stdout)
}

// serviceInstall validates the serve flags as wharf serve would, renders
// the unit and installs it.
func serviceInstall(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// Install's own flags come first; everything after them is serve's.
	var printOnly, force bool
flags:
	for len(args) > 0 {
		switch args[0] {
		case "--print", "-print":
			printOnly = true
		case "--force", "-force":
			force = true
		case "-h", "-help", "--help":
			fmt.Fprint(stdout, serviceUsage)
			return nil
		case "--":
			args = args[1:]
			break flags
		default:
			break flags
		}
		args = args[1:]
	}
	f, err := parseServe(args, getenv, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) && (strings.Contains(err.Error(), "-print") || strings.Contains(err.Error(), "-force")) {
			return usagef("service install: %v (--print and --force come before the serve flags)", err)
		}
		return err
	}
	// The service does not run in this folder: a relative path would
	// name another file there.
	for _, p := range []struct{ flag, path string }{{"--state-dir", f.stateDir}, {"--tls-cert", f.tlsCert}, {"--tls-key", f.tlsKey}} {
		if p.path != "" && !filepath.IsAbs(p.path) {
			return usagef("service install: %s %q is relative; give an absolute path", p.flag, p.path)
		}
	}
	m, err := serviceManager(getenv)
	if err != nil {
		return err
	}
	// A setting taken from this shell's environment would be missing in
	// the service's: it goes into the unit as the flag it stands for.
	spec, err := serviceSpec(append(slices.Clone(args), envSettings(f)...), f.stateDir, getenv)
	if err != nil {
		return err
	}
	unit, err := m.Render(spec)
	if err != nil {
		return fmt.Errorf("service install: %w", err)
	}
	if printOnly {
		fmt.Fprintf(stderr, "# wharf service install would write %s:\n", m.Path())
		_, err := stdout.Write(unit)
		return err
	}
	outcome, err := m.Install(ctx, unit, force)
	var diff *osservice.DifferentError
	var notStarted *osservice.NotStartedError
	switch {
	case errors.As(err, &notStarted):
		return fmt.Errorf("service install: %w; where no user service manager runs (a shell without a login "+
			"session), run `sudo loginctl enable-linger %s` and install again", err, getenv("USER"))
	case errors.As(err, &diff):
		return fmt.Errorf("service install: a different unit is installed at %s; see it with `wharf service status`, "+
			"review the new one with --print, and replace it with --force", diff.Path)
	case err != nil:
		return fmt.Errorf("service install: %w", err)
	}
	switch outcome {
	case osservice.Created:
		fmt.Fprintf(stderr, "installed %s and started the service\n", m.Path())
	case osservice.Replaced:
		fmt.Fprintf(stderr, "replaced %s and restarted the service\n", m.Path())
	case osservice.Unchanged:
		fmt.Fprintf(stderr, "%s is already installed as asked; the service is enabled and started\n", m.Path())
	}
	fmt.Fprintf(stderr, "it runs: %s\n", shellJoin(append([]string{spec.Program}, spec.Args...)))
	if strings.Contains(spec.Program, "go-build") || strings.HasPrefix(spec.Program, os.TempDir()) {
		fmt.Fprintf(stderr, "warning: %s looks like a temporary build (go run); install wharf and run its service install instead\n", spec.Program)
	}
	if spec.LogFile != "" {
		fmt.Fprintf(stderr, "its log: %s\n", spec.LogFile)
	} else {
		fmt.Fprintf(stderr, "its log: journalctl --user -u %s\n", serviceName)
	}
	// firstUser writes the password to this file when the Hub has no user
	// and no terminal, which is the case under a service manager.
	fmt.Fprintf(stderr, "if the Hub has no user yet, the first user's password will be in\n    %s\n"+
		"(readable only by you; delete the file once you have the password)\n",
		filepath.Join(f.stateDir, firstPasswordFile))
	if note := m.BootNote(ctx, getenv("USER")); note != "" {
		fmt.Fprintf(stderr, "note: %s\n", note)
	}
	return nil
}

// serviceSpec is what the service runs: this executable, serve with the
// given flags and the state directory pinned (the service's environment
// may not compute the same default), and this PATH, so the Hub finds the
// same git and agents as wharf serve started here would.
func serviceSpec(serveArgs []string, stateDir string, getenv func(string) string) (osservice.Spec, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return osservice.Spec{}, fmt.Errorf("service install: the path of this program: %w", err)
	}
	args := append([]string{"serve"}, serveArgs...)
	if !setsFlag(serveArgs, "state-dir") {
		args = append(args, "--state-dir="+stateDir)
	}
	s := osservice.Spec{
		Name: serviceName, Label: serviceLabel, Description: "Wharf Hub",
		Program: exe, Args: args,
	}
	if p := getenv("PATH"); p != "" {
		s.Env = []osservice.EnvVar{{Name: "PATH", Value: p}}
	}
	if runtime.GOOS == "darwin" {
		s.LogFile = filepath.Join(getenv("HOME"), "Library", "Logs", "wharf", "wharf.log")
	}
	return s, nil
}

// envSettings returns, as flags, the settings of f that came from
// environment variables (config.go), one flag per value of a repeatable
// one. --print-config is not a setting of the service.
func envSettings(f serveFlags) []string {
	var out []string
	f.fs.VisitAll(func(fl *flag.Flag) {
		if !strings.HasPrefix(string(f.from[fl.Name]), "env ") || fl.Name == "print-config" {
			return
		}
		values := []string{fl.Value.String()}
		if fl.Name == "agent" {
			values = strings.Split(values[0], "\n")
		}
		for _, v := range values {
			out = append(out, "--"+fl.Name+"="+v)
		}
	})
	return out
}

// setsFlag reports whether args (accepted by parseServe) set the flag
// name.
func setsFlag(args []string, name string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// serviceManager is the service manager of this OS, for this user.
func serviceManager(getenv func(string) string) (osservice.Manager, error) {
	run := osservice.ExecRunner(getenv("PATH"))
	switch runtime.GOOS {
	case "linux":
		dir, err := osservice.UserUnitDir(getenv)
		if err != nil {
			return nil, fmt.Errorf("service: %w", err)
		}
		return &osservice.Systemd{Dir: dir, Name: serviceName, Run: run}, nil
	case "darwin":
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return nil, errors.New("service: no home directory: set HOME")
		}
		return &osservice.Launchd{Dir: filepath.Join(home, "Library", "LaunchAgents"), Label: serviceLabel,
			UID: os.Getuid(), Run: run}, nil
	}
	return nil, fmt.Errorf("service: no service manager is supported on %s; run wharf serve under your own", runtime.GOOS)
}

// serviceStatus prints what the unit runs and what the manager says.
func serviceStatus(ctx context.Context, m osservice.Manager, stdout io.Writer) error {
	st, err := m.Status(ctx)
	if !st.Installed && err == nil {
		fmt.Fprintf(stdout, "unit:    %s (not installed)\nstate:   %s\n", st.Path, orUnknown(st.State))
		return nil
	}
	fmt.Fprintf(stdout, "unit:    %s\n", st.Path)
	if st.CommandErr != nil {
		fmt.Fprintf(stdout, "runs:    (not read back: %v)\n", st.CommandErr)
	} else if st.Command != nil {
		fmt.Fprintf(stdout, "runs:    %s\n", shellJoin(st.Command))
	}
	if err != nil {
		return fmt.Errorf("service status: %w", err)
	}
	state := orUnknown(st.State)
	if st.Enabled != "" {
		state += ", " + st.Enabled
	}
	fmt.Fprintf(stdout, "state:   %s\n", state)
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// shellJoin quotes a command for a POSIX shell, so a person can read and
// paste it.
func shellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
			words[i] = a
		} else {
			words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ")
}
