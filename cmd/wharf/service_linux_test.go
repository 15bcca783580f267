package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/osservice"
)

// serviceEnv is a user's environment for `wharf service` whose systemctl
// and loginctl are fakes that record their arguments: the real user's
// systemd is never touched.
type serviceEnv struct {
	env   map[string]string
	calls string // the file the fakes append their command lines to
	unit  string // where the unit goes
}

// newServiceEnv makes a home, a config folder and fake tools; loginctl
// answers Linger=linger.
func newServiceEnv(t *testing.T, linger string) *serviceEnv {
	t.Helper()
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	calls := filepath.Join(root, "calls")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := func(name, answer string) {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> '" + calls + "'\n" + answer
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fake("systemctl", `case "$*" in *" show "*) printf 'ActiveState=active\nSubState=running\nUnitFileState=enabled\n';; esac`+"\n")
	fake("loginctl", "echo Linger="+linger+"\n")
	config := filepath.Join(root, "config")
	return &serviceEnv{
		env: map[string]string{
			"HOME": filepath.Join(root, "home"), "XDG_CONFIG_HOME": config, "USER": "ann",
			"PATH": bin + ":/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-ant-not-for-the-unit",
		},
		calls: calls,
		unit:  filepath.Join(config, "systemd", "user", "wharf.service"),
	}
}

// wharf runs a wharf command in this environment.
func (s *serviceEnv) wharf(t *testing.T, args ...string) (stdout, stderr string, err error) {
	return wharfCmd(testContext(t), s.env, strings.NewReader(""), args...)
}

// takeCalls returns the fakes' command lines since the last take.
func (s *serviceEnv) takeCalls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(s.calls)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.calls); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// unitCommand reads the installed unit's command back.
func (s *serviceEnv) unitCommand(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(s.unit)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			cmd, err := osservice.ParseExecStart(v)
			if err != nil {
				t.Fatal(err)
			}
			return cmd
		}
	}
	t.Fatal("no ExecStart= in the unit")
	return nil
}

func thisProgram(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestServiceInstallWritesAUnitThatRunsServeWithTheGivenFlags(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "no")
	state := filepath.Join(t.TempDir(), "my state", "100% wharf")
	agent := `mine=["/opt/my agent/bin","--flag","$HOME's \"x\""]`
	_, stderr, err := s.wharf(t, "service", "install", "--listen", "127.0.0.1:4800", "--state-dir", state, "--agent", agent)
	is.NoErr(err) // install succeeds

	is.Equal(s.unitCommand(t), []string{thisProgram(t), "serve", "--listen", "127.0.0.1:4800", "--state-dir", state, "--agent", agent}) // the unit runs serve with the flags as given
	is.Equal(fileMode(t, s.unit), os.FileMode(0o644))                                                                                   // readable like any unit
	unit, _ := os.ReadFile(s.unit)
	is.True(!strings.Contains(string(unit), "sk-ant-"))                                                                                                             // the environment's secrets stay out of the unit
	is.True(strings.Contains(string(unit), "\nEnvironment=\"PATH="+s.env["PATH"]+"\"\n"))                                                                           // only PATH is carried over
	is.Equal(s.takeCalls(t), []string{"systemctl --user daemon-reload", "systemctl --user enable --now wharf.service", "loginctl show-user ann --property=Linger"}) // reloaded, enabled, started; linger asked
	is.True(strings.Contains(stderr, "sudo loginctl enable-linger ann"))                                                                                            // the linger step is printed
	is.True(strings.Contains(stderr, filepath.Join(state, "first-user-password")))                                                                                  // and where the first password will be
	is.True(strings.Contains(stderr, "journalctl --user -u wharf"))                                                                                                 // and where the logs go
	is.True(!strings.Contains(stderr, "sk-ant-"))                                                                                                                   // and no secret
	verifyUnit(t, s.unit)

	_, stderr, err = s.wharf(t, "service", "install", "--listen", "127.0.0.1:4800", "--state-dir", state, "--agent", agent)
	is.NoErr(err)                                          // the same install again succeeds
	is.True(strings.Contains(stderr, "already installed")) // and says nothing changed
	is.Equal(len(s.takeCalls(t)), 3)                       // making sure it runs
}

func TestServiceInstallPinsTheDefaultStateDirectory(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "yes")
	_, stderr, err := s.wharf(t, "service", "install")
	is.NoErr(err) // install without flags succeeds
	want := filepath.Join(s.env["HOME"], ".local", "state", "wharf")
	is.Equal(s.unitCommand(t), []string{thisProgram(t), "serve", "--state-dir=" + want}) // the default state directory is named in the unit
	is.True(!strings.Contains(stderr, "enable-linger"))                                  // a lingering user is not asked to linger
}

func TestServiceInstallCarriesSettingsFromTheEnvironmentIntoTheUnit(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "yes")
	state := filepath.Join(t.TempDir(), "state")
	s.env["WHARF_STATE_DIR"] = state
	s.env["WHARF_LOG_FORMAT"] = "json"
	s.env["WHARF_AGENT"] = "x=prog --acp\ny=[\"my agent\"]"
	s.env["WHARF_LISTEN"] = "127.0.0.1:4999" // the flag below wins
	_, _, err := s.wharf(t, "service", "install", "--listen", "127.0.0.1:4800")
	is.NoErr(err) // install succeeds
	is.Equal(s.unitCommand(t), []string{thisProgram(t), "serve", "--listen", "127.0.0.1:4800",
		"--agent=x=prog --acp", `--agent=y=["my agent"]`, "--log-format=json", "--state-dir=" + state}) // each variable as its flag, the command line's flag kept
	verifyUnit(t, s.unit)
}

func TestServiceInstallReplacesADifferentUnitOnlyWithForce(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "yes")
	_, _, err := s.wharf(t, "service", "install", "--listen", "127.0.0.1:4800")
	is.NoErr(err) // a first install succeeds
	first, _ := os.ReadFile(s.unit)
	s.takeCalls(t)

	_, _, err = s.wharf(t, "service", "install", "--listen", "127.0.0.1:4900")
	is.True(err != nil && strings.Contains(err.Error(), "--force")) // a different unit is refused, naming the way out
	now, _ := os.ReadFile(s.unit)
	is.Equal(string(now), string(first)) // the unit is left as it was
	is.Equal(len(s.takeCalls(t)), 0)     // and systemd untouched

	_, stderr, err := s.wharf(t, "service", "install", "--force", "--listen", "127.0.0.1:4900")
	is.NoErr(err)                                                                                                                                               // with --force it succeeds
	is.True(strings.Contains(stderr, "replaced"))                                                                                                               // replacing the unit
	is.True(strings.Contains(s.unitCommand(t)[3], "127.0.0.1:4900"))                                                                                            // with the new flags
	is.Equal(s.takeCalls(t)[:3], []string{"systemctl --user daemon-reload", "systemctl --user enable wharf.service", "systemctl --user restart wharf.service"}) // and restarting the service
}

func TestServiceInstallWithoutAUserManagerSaysTheUnitIsInPlaceAndWhatToDo(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "no")
	noBus := "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"
	is.NoErr(os.WriteFile(filepath.Join(strings.Split(s.env["PATH"], ":")[0], "systemctl"), []byte(noBus), 0o755)) // systemctl with no user manager
	_, _, err := s.wharf(t, "service", "install")
	is.True(err != nil)                                                       // install fails
	is.True(strings.Contains(err.Error(), s.unit+" is in place"))             // saying the unit is written
	is.True(strings.Contains(err.Error(), "Failed to connect to bus"))        // why systemd did not start it
	is.True(strings.Contains(err.Error(), "sudo loginctl enable-linger ann")) // and what to do
	_, err = os.Stat(s.unit)
	is.NoErr(err) // the unit is there for the next try
}

func TestServiceInstallPrintWritesNothing(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "no")
	stdout, _, err := s.wharf(t, "service", "install", "--print", "--listen", "127.0.0.1:4800")
	is.NoErr(err)                                                                                                     // --print succeeds
	is.True(strings.Contains(stdout, "\nExecStart=\""+thisProgram(t)+"\" \"serve\" \"--listen\" \"127.0.0.1:4800\"")) // printing the unit
	_, err = os.Stat(s.unit)
	is.True(errors.Is(err, os.ErrNotExist)) // writing no file
	is.Equal(len(s.takeCalls(t)), 0)        // and running nothing
}

func TestServiceInstallRefusesBadServeFlagsWithExitStatus2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--listen", "nowhere"},
		{"--no-such-flag"},
		{"--session-lifetime", "1s"},
		{"--listen", "0.0.0.0:4700"},
		{"--state-dir", "relative/state"},
		{"--agent", "no-command="},
		{"--listen", "127.0.0.1:4700", "--force"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			is := is.New(t)
			s := newServiceEnv(t, "no")
			_, _, err := s.wharf(t, append([]string{"service", "install"}, args...)...)
			var ue usageError
			is.True(errors.As(err, &ue)) // refused as a usage error: exit status 2
			_, err = os.Stat(s.unit)
			is.True(errors.Is(err, os.ErrNotExist)) // writing no unit
			is.Equal(len(s.takeCalls(t)), 0)        // and running nothing
		})
	}
}

func TestServiceUninstallRemovesTheUnitAndIsIdempotent(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "yes")
	_, _, err := s.wharf(t, "service", "install")
	is.NoErr(err) // install succeeds
	s.takeCalls(t)

	_, stderr, err := s.wharf(t, "service", "uninstall")
	is.NoErr(err)                                // uninstall succeeds
	is.True(strings.Contains(stderr, "removed")) // saying what it did
	_, err = os.Stat(s.unit)
	is.True(errors.Is(err, os.ErrNotExist))                                                                                                                             // the unit is gone
	is.Equal(s.takeCalls(t), []string{"systemctl --user disable --now wharf.service", "systemctl --user reset-failed wharf.service", "systemctl --user daemon-reload"}) // after stopping and disabling the service

	_, stderr, err = s.wharf(t, "service", "uninstall")
	is.NoErr(err)                                      // a second uninstall succeeds
	is.True(strings.Contains(stderr, "nothing to do")) // doing nothing
	is.Equal(len(s.takeCalls(t)), 0)                   // and touching no systemd
}

func TestServiceStatusReportsTheUnitItsCommandAndState(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	s := newServiceEnv(t, "yes")
	stdout, _, err := s.wharf(t, "service", "status")
	is.NoErr(err)                                      // status without a unit succeeds
	is.True(strings.Contains(stdout, "not installed")) // and says so

	state := filepath.Join(t.TempDir(), "it's here")
	_, _, err = s.wharf(t, "service", "install", "--state-dir", state)
	is.NoErr(err) // install succeeds
	stdout, _, err = s.wharf(t, "service", "status")
	is.NoErr(err)                                                                                                     // status succeeds
	is.True(strings.Contains(stdout, s.unit))                                                                         // naming the unit
	is.True(strings.Contains(stdout, "runs:    "+shellJoin([]string{thisProgram(t), "serve", "--state-dir", state}))) // its command, quoted for a shell
	is.True(strings.Contains(stdout, "state:   active (running), enabled"))                                           // and systemd's state
	is.True(strings.Contains(strings.Join(s.takeCalls(t), "\n"), "systemctl --user show wharf.service"))              // asked of systemctl
}

// verifyUnit runs `systemd-analyze verify` on an installed unit; without
// systemd-analyze, or a user manager it can load, it says why and skips.
func verifyUnit(t *testing.T, path string) {
	t.Helper()
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed (Debian's systemd package): the unit is not verified")
		return
	}
	runtimeDir, err := os.MkdirTemp("", "rt") // short: the system's user units put sockets there
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(runtimeDir)
	ctx, cancel := context.WithTimeout(testContext(t), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "verify", "--user", "--man=no", path)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "Failed to initialize manager") {
		t.Logf("systemd-analyze cannot load a user manager here, the unit is not verified: %s", out)
		return
	}
	is := is.New(t)
	is.NoErr(err)                                                // systemd-analyze verify accepts the unit
	is.True(!strings.Contains(string(out), filepath.Base(path))) // without a warning about it
}
