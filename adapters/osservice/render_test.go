package osservice_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/osservice"
)

// awkward are arguments that a naive unit would mangle: spaces, quotes,
// backslashes, systemd's specifiers and variables, XML's markup.
var awkward = [][]string{
	{"serve", "--state-dir=/srv/my state/100% wharf", "--listen", "127.0.0.1:4700"},
	{"serve", `--agent=mine=["/opt/my agent/bin","--model","a \"quoted\" $HOME ${USER} %h"]`},
	{"serve", `back\slash`, `trailing\`, `'single'`, ";", "", "<tag>&amp;</tag>", "naïve ☃"},
	{"serve", "--state-dir", "$$", "%%", "%n", "${X}"},
}

// program is an executable whose path needs quoting, so the unit's
// program word is awkward too and systemd-analyze finds it.
func program(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my bin %n")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "wharf")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(prog string, args []string) osservice.Spec {
	return osservice.Spec{
		Name: "wharf", Label: "com.example.wharf", Description: "Wharf Hub (100% yours)",
		Program: prog, Args: args,
		Env:     []osservice.EnvVar{{Name: "PATH", Value: "/home/a b/bin:/usr/bin:%h"}},
		LogFile: "/Users/a b/Library/Logs/wharf/wharf.log",
	}
}

// execStart returns the value of the unit's ExecStart= line.
func execStart(t *testing.T, unit []byte) string {
	t.Helper()
	for _, line := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			return v
		}
	}
	t.Fatalf("no ExecStart= in\n%s", unit)
	return ""
}

func TestAnAwkwardCommandReadsBackFromTheSystemdUnitUnchanged(t *testing.T) {
	prog := program(t)
	for _, args := range awkward {
		t.Run(args[1], func(t *testing.T) {
			is := is.New(t)
			unit, err := osservice.SystemdUnit(spec(prog, args))
			is.NoErr(err) // the unit renders
			got, err := osservice.ParseExecStart(execStart(t, unit))
			is.NoErr(err)                                            // its ExecStart reads back
			is.Equal(got, append([]string{prog}, args...))           // as the very same command
			verifySystemd(t, writeUnit(t, unit), "")                 // and systemd accepts it
			is.True(strings.Contains(string(unit), "(100%% yours)")) // the description's % is escaped too
		})
	}
}

func TestTheSystemdUnitRestartsOnFailureAndLogsToTheJournal(t *testing.T) {
	is := is.New(t)
	unit, err := osservice.SystemdUnit(spec("/usr/bin/wharf", []string{"serve"}))
	is.NoErr(err) // the unit renders
	for _, line := range []string{
		"Restart=on-failure", "RestartSec=5s", "RestartPreventExitStatus=2", "KillMode=mixed",
		"StandardOutput=journal", "StandardError=journal", "NoNewPrivileges=yes", "UMask=0077",
		"WantedBy=default.target", `Environment="PATH=/home/a b/bin:/usr/bin:%%h"`,
	} {
		is.True(slices.Contains(strings.Split(string(unit), "\n"), line)) // the unit has the line
	}
	is.True(!strings.Contains(string(unit), "PrivateTmp")) // no namespace setting a user manager may refuse
}

func TestAnArgumentAUnitCannotCarryIsRefused(t *testing.T) {
	for _, arg := range []string{"two\nlines", "tab\there", "bell\a", "bad \xff utf-8"} {
		t.Run(arg, func(t *testing.T) {
			is := is.New(t)
			_, err := osservice.SystemdUnit(spec("/usr/bin/wharf", []string{"serve", arg}))
			is.True(err != nil) // systemd refuses it
			_, err = osservice.LaunchdPlist(spec("/usr/bin/wharf", []string{"serve", arg}))
			is.True(err != nil) // and so does launchd
		})
	}
	is := is.New(t)
	_, err := osservice.SystemdUnit(spec("wharf", nil))
	is.True(err != nil) // a program is an absolute path
	_, err = osservice.SystemdUnit(spec("/opt/$x/wharf", nil))
	is.True(err != nil) // whose path holds no '$', which systemd would not expand
}

func TestAnExecStartThatNeedsAManagerIsNotReadBack(t *testing.T) {
	for _, line := range []string{
		`/usr/bin/wharf %h`, `/usr/bin/wharf $HOME`, `-/usr/bin/wharf`, `/usr/bin/wharf "open`,
		`/usr/bin/wharf \q`, ``, `wharf serve`, `/opt/$$x/wharf`,
	} {
		t.Run(line, func(t *testing.T) {
			is := is.New(t)
			_, err := osservice.ParseExecStart(line)
			is.True(err != nil) // refused rather than guessed
		})
	}
	is := is.New(t)
	got, err := osservice.ParseExecStart(`/usr/bin/wharf a\ b 'c d' "e\"f" g"h i"j 100%% $$x`)
	is.NoErr(err)                                                                         // systemd's quoting reads back
	is.Equal(got, []string{"/usr/bin/wharf", "a b", "c d", `e"f`, "gh ij", "100%", "$x"}) // word by word
}

func TestSystemdAnalyzeRefusesABadlyQuotedUnit(t *testing.T) {
	unit, err := osservice.SystemdUnit(spec(program(t), []string{"serve"}))
	if err != nil {
		t.Fatal(err)
	}
	// The check the round-trip test relies on can fail: unbalanced quotes.
	bad := bytes.Replace(unit, []byte(`"serve"`), []byte(`"serve`), 1)
	verifySystemd(t, writeUnit(t, bad), "Unbalanced quoting")
}

func TestAnAwkwardCommandReadsBackFromTheLaunchdPlistUnchanged(t *testing.T) {
	for _, args := range awkward {
		t.Run(args[1], func(t *testing.T) {
			is := is.New(t)
			plist, err := osservice.LaunchdPlist(spec("/Applications/my apps/wharf", args))
			is.NoErr(err) // the plist renders
			got, err := osservice.PlistProgramArguments(plist)
			is.NoErr(err)                                                           // it reads back
			is.Equal(got, append([]string{"/Applications/my apps/wharf"}, args...)) // as the very same command
			logs, err := osservice.PlistLogFile(plist)
			is.NoErr(err)                                             // so does its log file
			is.Equal(logs, "/Users/a b/Library/Logs/wharf/wharf.log") // unchanged
			for _, want := range []string{"<key>SuccessfulExit</key>\n\t\t<false/>", "<key>RunAtLoad</key>\n\t<true/>", "<key>Umask</key>\n\t<integer>63</integer>"} {
				is.True(strings.Contains(string(plist), want)) // restarts on failure, starts at load, private files
			}
			plutilLint(t, plist)
		})
	}
}

// writeUnit writes unit as wharf.service in a new folder.
func writeUnit(t *testing.T, unit []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wharf.service")
	if err := os.WriteFile(p, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// verifySystemd runs `systemd-analyze verify` on a user unit: with want
// "" it must pass silently, else fail saying want. It needs no running
// systemd: --user with a private XDG_RUNTIME_DIR, --man=no.
func verifySystemd(t *testing.T, path, want string) {
	t.Helper()
	bin, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package): the unit is not verified")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "verify", "--user", "--man=no", path)
	// A short runtime folder: the user manager loads the system's user
	// units too, whose socket paths under it must fit a socket address.
	runtime, err := os.MkdirTemp("", "rt")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(runtime)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "SYSTEMD_LOG_COLOR=0")
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "Failed to initialize manager") {
		t.Skipf("systemd-analyze cannot load a user manager here: %s", out)
	}
	is := is.New(t)
	t.Logf("systemd-analyze verify: %s", out)
	if want == "" {
		is.NoErr(err)             // systemd-analyze verify accepts the unit
		is.Equal(string(out), "") // without a warning
		return
	}
	var ee *exec.ExitError
	is.True(errors.As(err, &ee))                 // systemd-analyze verify refuses the unit
	is.True(strings.Contains(string(out), want)) // saying why
}

// plutilLint checks plist with macOS's plutil when it is there.
func plutilLint(t *testing.T, plist []byte) {
	t.Helper()
	bin, err := exec.LookPath("plutil")
	if err != nil {
		t.Log("plutil is not installed (macOS only): the plist is checked by reading it back only")
		return
	}
	p := filepath.Join(t.TempDir(), "wharf.plist")
	if err := os.WriteFile(p, plist, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bin, "-lint", p).CombinedOutput()
	is.New(t).True(err == nil) // plutil -lint accepts the plist
	if err != nil {
		t.Log(string(out))
	}
}
