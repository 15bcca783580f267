// Package osservice installs a program as a per-user service of the
// operating system's service manager: a systemd user unit on Linux, a
// launchd agent on macOS. It knows nothing of the Hub; its caller says what
// to run.
//
// Design:
//   - Rendering is pure (SystemdUnit, LaunchdPlist) so it is tested on every
//     OS; the managers (Systemd, Launchd) write the file and drive the
//     manager's own command-line tools through a Runner, which tests replace,
//     so no test touches the real user's services.
//   - The file is the whole truth about the service. Install compares the
//     rendered unit with the one on disk: the same is a no-op (it only makes
//     sure the service is enabled and running), a different one is refused
//     unless forced, and a forced replacement restarts the service.
//   - Arguments reach the program exactly as given: each is quoted for the
//     format (systemd's quotes, specifiers and variables; XML for a plist),
//     and one the format cannot carry faithfully (a control character,
//     invalid UTF-8) is refused rather than mangled.
//   - A unit is not a secret (0644, as service managers expect; a program's
//     arguments are visible to every local user anyway): the caller never
//     puts a password or a token in a Spec.
package osservice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode"
	"unicode/utf8"
)

// Spec is what a service runs.
type Spec struct {
	// Name names the service: the systemd unit Name.service.
	Name string
	// Label is the launchd label (reverse DNS, e.g. com.example.app).
	Label string
	// Description is one line for people.
	Description string
	// Program is the absolute path of the executable.
	Program string
	// Args are the program's arguments, after its name.
	Args []string
	// Env holds environment variables the service sets, in this order.
	Env []EnvVar
	// LogFile is where a launchd agent's standard output and error go
	// (systemd sends them to the journal).
	LogFile string
}

// EnvVar is one environment variable of a service.
type EnvVar struct{ Name, Value string }

// check refuses a Spec a unit cannot carry faithfully.
func (s Spec) check() error {
	if s.Name == "" || s.Label == "" {
		return errors.New("osservice: a service needs a name and a label")
	}
	if !filepath.IsAbs(s.Program) {
		return fmt.Errorf("osservice: program %q is not an absolute path", s.Program)
	}
	for _, v := range append([]string{s.Name, s.Label, s.Description, s.Program, s.LogFile}, s.Args...) {
		if err := checkText(v); err != nil {
			return err
		}
	}
	for _, e := range s.Env {
		if e.Name == "" || !isEnvName(e.Name) {
			return fmt.Errorf("osservice: bad environment variable name %q", e.Name)
		}
		if err := checkText(e.Value); err != nil {
			return err
		}
	}
	return nil
}

// checkText refuses what neither a unit file nor XML 1.0 can carry as is.
func checkText(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("osservice: %q is not valid UTF-8", v)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("osservice: %q holds a control character", v)
		}
	}
	return nil
}

func isEnvName(n string) bool {
	for i, r := range n {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Manager installs, removes and reports one service.
type Manager interface {
	// Path is the unit file's path.
	Path() string
	// Render returns the unit file for s.
	Render(s Spec) ([]byte, error)
	// Install writes unit (unless the same is there), then loads, enables
	// and starts the service; a forced replacement restarts it. A
	// different unit already installed is refused with a *DifferentError
	// unless force is set. Once the file is in place, a failure of the
	// manager's tools is a *NotStartedError.
	Install(ctx context.Context, unit []byte, force bool) (Outcome, error)
	// Uninstall stops and disables the service and removes its file. It
	// reports whether there was a file; with none it does nothing.
	Uninstall(ctx context.Context) (bool, error)
	// Status reports whether the unit is installed, what it runs and
	// what the manager says of it.
	Status(ctx context.Context) (Status, error)
	// BootNote returns what a person must still do for the service to
	// start at boot without a login, or "" when nothing.
	BootNote(ctx context.Context, user string) string
}

// Outcome says what Install did to the file.
type Outcome int

// What Install did.
const (
	Created Outcome = iota
	Unchanged
	Replaced
)

// DifferentError refuses to replace a different installed unit.
type DifferentError struct{ Path string }

func (e *DifferentError) Error() string {
	return fmt.Sprintf("a different service is installed at %s", e.Path)
}

// NotStartedError says the unit file is in place but the service manager
// did not load or start it (no user manager to reach, say).
type NotStartedError struct {
	Path string
	Err  error
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("%s is in place, but the service manager did not start it: %v", e.Path, e.Err)
}

func (e *NotStartedError) Unwrap() error { return e.Err }

// Status is what Manager.Status reports.
type Status struct {
	Path      string
	Installed bool
	// Command is the program and its arguments as the unit runs them;
	// nil when the file could not be read back (CommandErr says why).
	Command    []string
	CommandErr error
	// State is the manager's word for it ("active (running)", "inactive
	// (dead)", "running", "not loaded"); Enabled its boot state where the
	// manager has one ("enabled", "disabled").
	State, Enabled string
}

// place puts unit at path unless the same is there, refusing a different
// one unless force is set; prepare, when not nil, runs before a write.
func place(path string, unit []byte, force bool, prepare func() error) (Outcome, error) {
	old, err := readUnit(path)
	if err != nil {
		return 0, err
	}
	switch {
	case old != nil && bytes.Equal(old, unit):
		return Unchanged, nil
	case old != nil && !force:
		return 0, &DifferentError{Path: path}
	}
	if prepare != nil {
		if err := prepare(); err != nil {
			return 0, err
		}
	}
	if err := writeFile(path, unit, 0o644); err != nil {
		return 0, err
	}
	if old != nil {
		return Replaced, nil
	}
	return Created, nil
}

// writeFile replaces path with data atomically (a temporary file in the
// same directory, renamed over it), mode perm.
func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// readUnit returns the installed file, nil when there is none. It is
// bounded: a unit is small, and a huge file there is not ours.
func readUnit(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxUnit+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxUnit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a unit this tool wrote", path, maxUnit)
	}
	return b, nil
}

// maxUnit bounds the unit files read back.
const maxUnit = 1 << 20
