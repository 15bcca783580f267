package osservice_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/osservice"
)

// fakeTools records the commands run and answers from a table keyed by
// the command line; a missing key answers nothing, successfully.
type fakeTools struct {
	mu      sync.Mutex
	calls   []string
	answers map[string]string
	fail    map[string]bool
}

func (f *fakeTools) run(_ context.Context, name string, args ...string) ([]byte, error) {
	line := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, line)
	if f.fail[line] {
		return nil, errors.New(line + ": exit status 1")
	}
	return []byte(f.answers[line]), nil
}

// take returns the commands run since the last take.
func (f *fakeTools) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func TestASystemdUnitIsInstalledReplacedOnlyWhenForcedAndUninstalledOnce(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	tools := &fakeTools{answers: map[string]string{
		"systemctl --user show wharf.service --property=ActiveState,SubState,UnitFileState": "ActiveState=active\nSubState=running\nUnitFileState=enabled\n",
	}}
	m := &osservice.Systemd{Dir: filepath.Join(t.TempDir(), "systemd", "user"), Name: "wharf", Run: tools.run}
	first, err := m.Render(spec("/usr/bin/wharf", []string{"serve", "--listen=127.0.0.1:4700"}))
	is.NoErr(err) // the unit renders

	outcome, err := m.Install(ctx, first, false)
	is.NoErr(err)                                                                                                     // install succeeds
	is.Equal(outcome, osservice.Created)                                                                              // creating the unit
	is.Equal(tools.take(), []string{"systemctl --user daemon-reload", "systemctl --user enable --now wharf.service"}) // then reloads, enables and starts it
	b, err := os.ReadFile(m.Path())
	is.NoErr(err)                                       // the unit is on disk
	is.Equal(string(b), string(first))                  // as rendered
	is.Equal(fileMode(t, m.Path()), os.FileMode(0o644)) // readable like any unit

	outcome, err = m.Install(ctx, first, false)
	is.NoErr(err)                                                                                                     // the same install again succeeds
	is.Equal(outcome, osservice.Unchanged)                                                                            // and changes nothing
	is.Equal(tools.take(), []string{"systemctl --user daemon-reload", "systemctl --user enable --now wharf.service"}) // but makes sure it runs

	second, err := m.Render(spec("/usr/bin/wharf", []string{"serve", "--listen=127.0.0.1:4800"}))
	is.NoErr(err) // another unit renders
	_, err = m.Install(ctx, second, false)
	var diff *osservice.DifferentError
	is.True(errors.As(err, &diff)) // a different unit is refused without force
	is.Equal(diff.Path, m.Path())  // naming the file
	is.Equal(len(tools.take()), 0) // and nothing is run
	b, _ = os.ReadFile(m.Path())
	is.Equal(string(b), string(first)) // the first unit stays

	outcome, err = m.Install(ctx, second, true)
	is.NoErr(err)                         // a forced install succeeds
	is.Equal(outcome, osservice.Replaced) // replacing the unit
	is.Equal(tools.take(), []string{"systemctl --user daemon-reload", "systemctl --user enable wharf.service",
		"systemctl --user restart wharf.service"}) // and restarts the service on it
	b, _ = os.ReadFile(m.Path())
	is.Equal(string(b), string(second)) // the second unit is there

	st, err := m.Status(ctx)
	is.NoErr(err)                                                                        // status succeeds
	is.True(st.Installed)                                                                // finding the unit
	is.Equal(st.Command, []string{"/usr/bin/wharf", "serve", "--listen=127.0.0.1:4800"}) // with its command
	is.Equal(st.State, "active (running)")                                               // and the manager's state
	is.Equal(st.Enabled, "enabled")                                                      // and boot state
	tools.take()

	removed, err := m.Uninstall(ctx)
	is.NoErr(err)    // uninstall succeeds
	is.True(removed) // removing the unit
	is.Equal(tools.take(), []string{"systemctl --user disable --now wharf.service",
		"systemctl --user reset-failed wharf.service", "systemctl --user daemon-reload"}) // after stopping and disabling it
	_, err = os.Stat(m.Path())
	is.True(errors.Is(err, os.ErrNotExist)) // the file is gone
	removed, err = m.Uninstall(ctx)
	is.NoErr(err)                  // uninstalling again succeeds
	is.True(!removed)              // finding nothing
	is.Equal(len(tools.take()), 0) // and doing nothing

	st, err = m.Status(ctx)
	is.NoErr(err)          // status succeeds
	is.True(!st.Installed) // reporting no unit
}

func TestUninstallRemovesTheUnitEvenWhenTheManagerCannotBeReached(t *testing.T) {
	is := is.New(t)
	tools := &fakeTools{fail: map[string]bool{"systemctl --user disable --now wharf.service": true}}
	m := &osservice.Systemd{Dir: t.TempDir(), Name: "wharf", Run: tools.run}
	unit, err := m.Render(spec("/usr/bin/wharf", []string{"serve"}))
	is.NoErr(err)                                 // the unit renders
	is.NoErr(os.WriteFile(m.Path(), unit, 0o644)) // and is there
	removed, err := m.Uninstall(t.Context())
	is.True(removed)                                                 // the file is removed
	is.True(err != nil && strings.Contains(err.Error(), "stopping")) // and the failure to stop is reported
}

func TestTheBootNoteAsksForLingerOnlyWhenItIsOff(t *testing.T) {
	lingerDir := t.TempDir()
	is.New(t).NoErr(os.WriteFile(filepath.Join(lingerDir, "bob"), nil, 0o644)) // logind's mark for bob
	for _, c := range []struct {
		name, user, loginctl string
		loginctlFails, want  bool
	}{
		{name: "logind says no", user: "ann", loginctl: "Linger=no\n", want: true},
		{name: "logind says yes", user: "ann", loginctl: "Linger=yes\n", want: false},
		{name: "no logind and no mark", user: "ann", loginctlFails: true, want: true},
		{name: "no logind but the mark", user: "bob", loginctlFails: true, want: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			line := "loginctl show-user " + c.user + " --property=Linger"
			tools := &fakeTools{answers: map[string]string{line: c.loginctl}, fail: map[string]bool{line: c.loginctlFails}}
			m := &osservice.Systemd{Dir: t.TempDir(), Name: "wharf", Run: tools.run, LingerDir: lingerDir}
			note := m.BootNote(t.Context(), c.user)
			is.Equal(strings.Contains(note, "loginctl enable-linger "+c.user), c.want) // the linger step is asked for when needed
		})
	}
}

func TestALaunchdAgentIsBootstrappedReplacedOnlyWhenForcedAndBootedOut(t *testing.T) {
	is := is.New(t)
	ctx := t.Context()
	tools := &fakeTools{fail: map[string]bool{"launchctl print gui/501/com.example.wharf": true}}
	home := t.TempDir()
	m := &osservice.Launchd{Dir: filepath.Join(home, "Library", "LaunchAgents"), Label: "com.example.wharf", UID: 501, Run: tools.run}
	s := spec("/usr/local/bin/wharf", []string{"serve"})
	s.LogFile = filepath.Join(home, "Library", "Logs", "wharf", "wharf.log")
	first, err := m.Render(s)
	is.NoErr(err) // the plist renders

	outcome, err := m.Install(ctx, first, false)
	is.NoErr(err)                        // install succeeds
	is.Equal(outcome, osservice.Created) // creating the plist
	is.Equal(tools.take(), []string{"launchctl print gui/501/com.example.wharf", "launchctl enable gui/501/com.example.wharf",
		"launchctl bootstrap gui/501 " + m.Path()}) // and bootstraps it
	is.Equal(fileMode(t, filepath.Dir(s.LogFile)), os.FileMode(0o700)|os.ModeDir) // into a private log folder

	tools.fail = nil // loaded from now on
	outcome, err = m.Install(ctx, first, false)
	is.NoErr(err)                                                                 // the same install again succeeds
	is.Equal(outcome, osservice.Unchanged)                                        // changing nothing
	is.Equal(tools.take(), []string{"launchctl print gui/501/com.example.wharf"}) // and leaving the running agent alone

	s.Args = []string{"serve", "--listen=127.0.0.1:4800"}
	second, err := m.Render(s)
	is.NoErr(err) // another plist renders
	_, err = m.Install(ctx, second, false)
	var diff *osservice.DifferentError
	is.True(errors.As(err, &diff)) // a different plist is refused without force
	outcome, err = m.Install(ctx, second, true)
	is.NoErr(err)                         // a forced install succeeds
	is.Equal(outcome, osservice.Replaced) // replacing the plist
	is.Equal(tools.take(), []string{"launchctl print gui/501/com.example.wharf", "launchctl bootout gui/501/com.example.wharf",
		"launchctl enable gui/501/com.example.wharf", "launchctl bootstrap gui/501 " + m.Path()}) // and reloading it

	tools.answers = map[string]string{"launchctl print gui/501/com.example.wharf": "gui/501/com.example.wharf = {\n\tactive count = 1\n\tstate = running\n}\n"}
	st, err := m.Status(ctx)
	is.NoErr(err)                                                                              // status succeeds
	is.Equal(st.Command, []string{"/usr/local/bin/wharf", "serve", "--listen=127.0.0.1:4800"}) // reading the command back
	is.Equal(st.State, "running")                                                              // and launchd's state
	tools.take()

	removed, err := m.Uninstall(ctx)
	is.NoErr(err)                                                                                                                // uninstall succeeds
	is.True(removed)                                                                                                             // removing the plist
	is.Equal(tools.take(), []string{"launchctl print gui/501/com.example.wharf", "launchctl bootout gui/501/com.example.wharf"}) // after booting it out
	removed, err = m.Uninstall(ctx)
	is.NoErr(err)     // uninstalling again succeeds
	is.True(!removed) // finding nothing
}

func TestTheExecRunnerFindsCommandsOnTheGivenPathOnly(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"out $*\"\necho 'why it failed' >&2\nexit 3\n"
	is.NoErr(os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755)) // a fake systemctl
	run := osservice.ExecRunner("relative:" + dir)
	out, err := run(t.Context(), "systemctl", "--user", "status")
	is.Equal(string(out), "out --user status\n")                                                                                      // it runs with the arguments
	is.True(err != nil && strings.Contains(err.Error(), "systemctl --user status") && strings.Contains(err.Error(), "why it failed")) // a failure names the command and its reason
	var ee *exec.ExitError
	is.True(errors.As(err, &ee) && ee.ExitCode() == 3) // and keeps the exit status
	_, err = osservice.ExecRunner(t.TempDir())(t.Context(), "systemctl")
	is.True(errors.Is(err, exec.ErrNotFound)) // a command not on the given path is not found
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode() &^ (os.ModeType &^ os.ModeDir)
}
